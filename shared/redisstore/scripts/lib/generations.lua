-- generations.lua: drop records, which tell the pending jobs of a deleted
-- queue (an older generation of its name) from those of the queue that
-- exists now.

-- Pending jobs of a deleted queue wait in the idx ranges of their queue's
-- name until drop_queue.lua (or a take) removes them, also when a queue of
-- that name is created again meanwhile: they are jobs of an older
-- generation. K.drop keeps, per deleted queue name, {g = the newest
-- deleted generation, c = {status code = how many of its pending jobs of
-- generation g or older are left in that range}, r, m, f = the dropper's
-- progress}; detach and attach keep c exact, so sizes and counts subtract
-- it. A record written before counts were kept has none: they are
-- counted on first use (every pending job when the queue was not created
-- again, else those of an old generation, looked at one by one up to
-- LEGACY_WALK jobs; past that the record stays uncounted, c = false, until
-- it is dropped).
local PENDING = {queued = 'q', scheduled = 's', waiting = 'w'}
local LEGACY_WALK = 10000

-- drop_of is the drop record of queue q in this partition (nil when none),
-- read once per call (A.dr keeps it; save_drop writes through it).
local function drop_of(q)
  A.dr = A.dr or {}
  local d = A.dr[q]
  if d == nil then
    d = decode(redis.call('HGET', K.drop, q)) or false
    if d and d.c == nil then
      local c, total = {}, 0
      for _, code in pairs(PENDING) do
        local lo, hi = lex_range(q .. ' ' .. code)
        c[code] = redis.call('ZLEXCOUNT', K.idx, lo, hi)
        total = total + c[code]
      end
      if total > 0 and redis.call('HEXISTS', K.q, q) == 1 then
        if total > LEGACY_WALK then
          c = false
        else
          for _, code in pairs(PENDING) do
            local lo, hi = lex_range(q .. ' ' .. code)
            c[code] = 0
            for _, m in ipairs(redis.call('ZRANGEBYLEX', K.idx, lo, hi)) do
              local raw = decode(redis.call('HGET', K.j, id_of_member(m)))
              if raw and num(raw.G) <= num(d.g) then c[code] = c[code] + 1 end
            end
          end
        end
      end
      d.c = c
      redis.call('HSET', K.drop, q, cjson.encode(d))
    end
    A.dr[q] = d
  end
  return d or nil
end

-- save_drop writes queue q's drop record d, or deletes it when d is nil.
local function save_drop(q, d)
  A.dr = A.dr or {}
  A.dr[q] = d or false
  if d then redis.call('HSET', K.drop, q, cjson.encode(d)) else redis.call('HDEL', K.drop, q) end
end

-- old_pending is the drop record that covers job j when j is a pending
-- job of a deleted generation of its queue (nil otherwise): such a job is
-- never taken, counted or listed, only dropped.
local function old_pending(j)
  if not PENDING[j.status or 'queued'] then return nil end
  local d = drop_of(j.queue)
  if d and num(j.gen) <= num(d.g) then return d end
  return nil
end

-- count_old adds n to the count of old pending jobs of j's status, when j
-- is one (detach and attach).
local function count_old(j, n)
  local d = old_pending(j)
  if not (d and d.c) then return end
  local code = PENDING[j.status or 'queued']
  d.c[code] = math.max(num(d.c[code]) + n, 0)
  save_drop(j.queue, d)
end

-- old_generation: job j was created for an earlier queue of its name than
-- the one that exists now (settings qs); b is the generation a queue was
-- created with, absent on queues created before it was kept (their jobs
-- are of the current generation unless a drop record says otherwise).
local function old_generation(j, qs)
  if num(j.gen) < num(qs.b) then return true end
  -- A queue deleted and created again before b was kept: its drop record
  -- still tells, while it lasts.
  local d = drop_of(j.queue)
  return d ~= nil and num(j.gen) <= num(d.g)
end
