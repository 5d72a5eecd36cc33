-- sweep_timeouts.lua: fail, as timed_out, running jobs past their deadline.
--
-- KEYS[1] -> {ns}:running  ZSET id -> deadline (ms)
-- ARGV[1] -> key prefix
-- ARGV[2] -> now, microseconds
-- ARGV[3] -> batch limit
--
-- Returns {timed_out_ids, {}, dropped_ids, more, next}: more is 1 when the
-- batch was full; next is the lowest deadline left ('' when none). Each job is
-- re-checked (still running, deadline really passed) before it is failed,
-- exactly as a client's PATCH timed_out would (retry or end).

local now = ARGV[2]
local now_ms = ms(now)
local limit = num(ARGV[3])
local done, dropped = {}, {}
local ids = due_ids(KEYS[1], now_ms, limit)
for _, id in ipairs(ids) do
  local r = timeout_step(id, now, now_ms)
  if r == 'timed_out' then done[#done + 1] = id
  elseif r == 'dropped' then dropped[#dropped + 1] = id end
end
local more = 0
if #ids >= limit then more = 1 end
return {done, {}, dropped, more, next_score(KEYS[1])}
