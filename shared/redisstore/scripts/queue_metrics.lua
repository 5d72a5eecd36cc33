-- queue_metrics.lua: figures of some queues for GET /metrics, read-only.
--
-- A.queues -> the queue names.
-- Reply {queues = {name = {c, d, f, t = today's created, completed, failed,
-- timed out jobs here (K.st: the day of A.now, plus today's statistics
-- still pending in K.sp, see stats.lua), o = the queued_at (or
-- created_at) of the job queued longest here (absent when none)}}}; a
-- queue with nothing here is left out.
--
-- The queued jobs of a queue are in take order: by priority, then in the
-- order they were queued. So the job queued longest is the head of one of
-- the priority classes: the walk looks at each class's head, up to
-- MAX_CLASSES classes (past that the age is the oldest of those heads).
-- A pending job of a deleted queue at a class's head is passed over (that
-- class then counts from its next job, looked at up to the same bound).

local MAX_CLASSES = 32

-- class_of is the priority class of a queued member's sort ("m" for 0,
-- else "a"/"z" and a length-prefixed number: lib.lua's prio_key).
local function class_of(sort)
  local c = string.sub(sort, 1, 1)
  if c == 'm' then return c end
  return string.sub(sort, 1, 2 + string.byte(sort, 2) - 96)
end

-- Today's pending statistics by queue: {c, d, f, t}.
local today, DAY = {}, {c = true, d = true, f = true, t = true}
local day = math.floor(A.ms / 86400000)
local flat = redis.call('HGETALL', K.sp)
for i = 1, #flat, 2 do
  local q, m, code = string.match(flat[i], '^(%S+) (%d+) (%a)%d*$')
  local w = PENDING[code]
  local k = w and w.day
  if k and DAY[k] and math.floor(num(m) / 1440) == day then
    local t = today[q]
    if not t then
      t = {}
      today[q] = t
    end
    t[k] = num(t[k]) + num(flat[i + 1])
  end
end

local out = {}
for _, q in ipairs(A.queues) do
  local r = {}
  local st = redis.call('HMGET', K.st, q .. ' c', q .. ' d', q .. ' f', q .. ' t')
  for i, k in ipairs({'c', 'd', 'f', 't'}) do
    if st[i] then r[k] = num(st[i]) end
  end
  for k, n in pairs(today[q] or {}) do r[k] = num(r[k]) + n end
  local lo, hi = lex_range(q .. ' q')
  local prefix = q .. ' q '
  local looked = 0
  while looked < MAX_CLASSES do
    local m = redis.call('ZRANGEBYLEX', K.idx, lo, hi, 'LIMIT', 0, 1)[1]
    if not m then break end
    looked = looked + 1
    local j = load_job(id_of_member(m))
    if j and old_pending(j) then
      lo = '(' .. m
    else
      if j then
        local t = j.queued_at or j.created_at
        if t and (not r.o or num(t) < num(r.o)) then r.o = t end
      end
      lo = '[' .. prefix .. class_of(string.sub(m, #prefix + 1)) .. '\255'
    end
  end
  if next(r) ~= nil then out[q] = r end
end
return cjson.encode({queues = out})
