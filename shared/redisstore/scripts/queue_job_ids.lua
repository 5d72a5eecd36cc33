-- queue_job_ids.lua: a queue's job ids grouped by status (GET /queue/{name}/job_ids).
--
-- KEYS[1] -> {ns}:queue:<name>  HASH of the settings
-- ARGV[1] -> key prefix
-- ARGV[2] -> queue name
--
-- Returns {2, name} when the queue is not registered (upstream answered 200
-- with leftovers; we answer 404), else
-- {0, queued, running, failed, completed, cancelled, timed_out}: arrays of ids,
-- queued in FIFO order, the others ascending by id. Read-only.

local q = ARGV[2]
if redis.call('EXISTS', KEYS[1]) == 0 then return {QUEUE_NOT_FOUND, q} end
local r = {OK, redis.call('ZRANGE', k_pending(q), 0, -1)}
for _, st in ipairs(INDEXED) do
  r[#r + 1] = redis.call('ZRANGE', k_index(q, st), 0, -1)
end
return r
