-- sweep_retries.lua: requeue failed and timed-out jobs whose retry is due.
--
-- KEYS[1] -> {ns}:failed  ZSET id -> retry due time (ms)
-- ARGV[1] -> key prefix
-- ARGV[2] -> now, microseconds
-- ARGV[3] -> batch limit
--
-- Returns {retried_ids, abandoned_ids, dropped_ids, more, next}. A due job is
-- requeued at the back of its queue with retries_attempted + 1, its output
-- and run timestamps cleared. When its queue was deleted the retry is
-- abandoned: the job gets the 'abandoned' flag and moves to {ns}:ended with
-- its normal expiry.

local now_ms = ms(ARGV[2])
local limit = num(ARGV[3])
local retried, abandoned, dropped = {}, {}, {}
local ids = due_ids(KEYS[1], now_ms, limit)
for _, id in ipairs(ids) do
  local r = retry_step(id, now_ms)
  if r == 'retried' then retried[#retried + 1] = id
  elseif r == 'abandoned' then abandoned[#abandoned + 1] = id
  elseif r == 'dropped' then dropped[#dropped + 1] = id end
end
local more = 0
if #ids >= limit then more = 1 end
return {retried, abandoned, dropped, more, next_score(KEYS[1])}
