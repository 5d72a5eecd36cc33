-- indexes.lua: the index entries a job's metadata calls for (idx members,
-- run, due, dq, exp, fg, fgc, wk, keys, tag, trk), added and removed.

-- prio_key sorts priorities highest first in as few bytes as possible for
-- the usual 0: 'm'; a higher priority p 'a' .. lp(1000000 - p); a lower
-- one 'z' .. lp(-p).
local function prio_key(p)
  if p == 0 then return 'm' end
  if p > 0 then return 'a' .. lp(1000000 - p) end
  return 'z' .. lp(-p)
end

-- The idx member of a job in its current status. A queued job sorts by
-- priority, then by (sc, sr), the order it was queued in, then by id; a job
-- queued when created has no sc stored: it is its id's sequence number.
local function idx_member(j)
  if j.status == 'queued' then
    local sr = num(j.sr)
    local sc = j.sc or (num(j.id) - A.p) / A.P
    return j.queue .. ' q ' .. prio_key(num(j.priority)) .. lp(sc) ..
      (sr > 0 and lp(sr) or '') .. ' ' .. j.id
  end
  return j.queue .. ' ' .. CODE[j.status] .. ' ' .. lp(j.id)
end

-- by_id_member is a queued job's second idx member, "<queue> Q <lp(id)>":
-- with the other statuses' members (by id already) a queue's jobs can be
-- listed by id across statuses (list.lua's merge). nil for other statuses.
local function by_id_member(j)
  if j.status == 'queued' then return j.queue .. ' Q ' .. lp(j.id) end
  return nil
end

-- Each queue counts its queued jobs in this partition: "<queue> n" in K.q
-- is the number of members of its queued idx range ("<queue> q ...",
-- pending jobs of a deleted queue of the name included, as the range holds
-- them), absent when none. /info and sizes read it. Every script that adds
-- or removes a queued member keeps it exact: count_queued when it knows
-- the member was added or removed, recount_queued when it cannot tell.
local function count_queued(q, n)
  local f = q .. ' n'
  if redis.call('HINCRBY', K.q, f, n) <= 0 then redis.call('HDEL', K.q, f) end
end

local function recount_queued(q)
  local lo, hi = lex_range(q .. ' q')
  local n = redis.call('ZLEXCOUNT', K.idx, lo, hi)
  if n > 0 then redis.call('HSET', K.q, q .. ' n', n) else redis.call('HDEL', K.q, q .. ' n') end
end

-- queued_changed follows the addition (n = 1) or removal (n = -1) of a
-- queued job's two idx members, which changed r of them: both, one (only
-- in data that lacked one of them: which is not known, so count again) or
-- none.
local function queued_changed(q, n, r)
  if r == 2 then count_queued(q, n) elseif r == 1 then recount_queued(q) end
end

-- unqueue_member removes queued member m of queue q, and its by-id member,
-- from idx: they belong to no queued job of q any more (the caller read m
-- from idx in this call).
local function unqueue_member(q, m)
  queued_changed(q, -1, redis.call('ZREM', K.idx, m, q .. ' Q ' .. lp(id_of_member(m))))
end

-- detach removes the entries that a job's status gives it; attach adds
-- them. Tags and tracking do not depend on the status (see untag_all).
local function detach(j)
  local b = by_id_member(j)
  if b then
    local r = redis.call('ZREM', K.idx, idx_member(j), b)
    if r >= 1 then count_old(j, -1) end
    queued_changed(j.queue, -1, r)
  elseif redis.call('ZREM', K.idx, idx_member(j)) == 1 then count_old(j, -1) end
  local st = j.status
  if st == 'running' then
    redis.call('ZREM', K.run, j.id)
    if j.worker then redis.call('ZREM', K.wk, esc(j.worker) .. ' r ' .. lp(j.id)) end
  elseif j.due then
    redis.call('ZREM', K.due, j.id)
    redis.call('ZREM', K.dq, j.queue .. ' ' .. lp(j.due) .. lp(j.id))
  elseif is_ended(j) then
    if j.expires_after and num(j.expires_after) > 0 then redis.call('ZREM', K.exp, j.id) end
    if st == 'failed' or st == 'timed_out' then
      local g = failure_group(j)
      redis.call('ZREM', K.fg, esc(g) .. ' ' .. lp(j.id))
      if redis.call('HINCRBY', K.fgc, g, -1) <= 0 then redis.call('HDEL', K.fgc, g) end
    end
  end
  if st == 'timed_out' and j.worker then redis.call('ZREM', K.wk, esc(j.worker) .. ' t ' .. lp(j.id)) end
  if j.key then
    if st == 'running' then
      redis.call('HDEL', K.keys, 'r ' .. j.queue .. ' ' .. j.key)
    elseif st == 'queued' or st == 'scheduled' or st == 'waiting' then
      -- A job of a deleted queue may have lost the slot to a newer one.
      local f = 'p ' .. j.queue .. ' ' .. j.key
      if redis.call('HGET', K.keys, f) == j.id then redis.call('HDEL', K.keys, f) end
    end
  end
end

local function attach(j)
  local b = by_id_member(j)
  if b then
    local r = redis.call('ZADD', K.idx, 0, idx_member(j), 0, b)
    if r >= 1 then count_old(j, 1) end
    queued_changed(j.queue, 1, r)
  elseif redis.call('ZADD', K.idx, 0, idx_member(j)) == 1 then count_old(j, 1) end
  local st = j.status
  if st == 'running' then
    redis.call('ZADD', K.run, int_str(running_deadline(j)), j.id)
    if j.worker then redis.call('ZADD', K.wk, 0, esc(j.worker) .. ' r ' .. lp(j.id)) end
  elseif j.due then
    redis.call('ZADD', K.due, int_str(j.due), j.id)
    redis.call('ZADD', K.dq, 0, j.queue .. ' ' .. lp(j.due) .. lp(j.id))
    note_due(j.queue, j.due)
    -- A waiting take sleeps until the earliest due time it saw: wake it to
    -- look again.
    local _, waiting = queue_settings(j.queue)
    wake(j.queue, waiting)
  elseif is_ended(j) then
    local e = expiry_time(j)
    if e ~= math.huge then redis.call('ZADD', K.exp, int_str(e), j.id) end
    if st == 'failed' or st == 'timed_out' then
      local g = failure_group(j)
      redis.call('ZADD', K.fg, 0, esc(g) .. ' ' .. lp(j.id))
      redis.call('HINCRBY', K.fgc, g, 1)
    end
  end
  if st == 'timed_out' and j.worker then redis.call('ZADD', K.wk, 0, esc(j.worker) .. ' t ' .. lp(j.id)) end
  if j.key then
    if st == 'running' then
      redis.call('HSET', K.keys, 'r ' .. j.queue .. ' ' .. j.key, j.id)
    elseif st == 'queued' or st == 'scheduled' or st == 'waiting' then
      redis.call('HSET', K.keys, 'p ' .. j.queue .. ' ' .. j.key, j.id)
    end
  end
end

-- settle stores a job whose new status is decided (after detach and the
-- change): its index entries, its metadata, and a wake-up for the takers
-- of its queue when it became queued.
local function settle(j)
  attach(j)
  save_job(j)
  if j.status == 'queued' then
    local _, waiting = queue_settings(j.queue)
    wake(j.queue, waiting)
  end
end

-- tags_of is a job's tags as a list (empty when none).
local function tags_of(j) return decode(j.tags) or {} end

local function tag_member(t, id) return esc(t) .. ' ' .. lp(id) end

-- untag_all removes the status-independent entries of a job: tags and
-- tracking.
local function untag_all(j)
  for _, t in ipairs(tags_of(j)) do
    if type(t) == 'string' then redis.call('ZREM', K.tag, tag_member(t, j.id)) end
  end
  if j.tracked then redis.call('ZREM', K.trk, j.queue .. ' ' .. lp(j.id)) end
end
