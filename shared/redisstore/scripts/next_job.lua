-- next_job.lua: take the oldest queued job of a queue (GET /queue/{name}/job).
--
-- KEYS[1] -> {ns}:queue:<name>  HASH of the queue's settings
-- ARGV[1] -> key prefix
-- ARGV[2] -> queue name
-- ARGV[3] -> now, microseconds
-- ARGV[4] -> inline sweep limit: before taking a job, time out up to this
--            many overdue running jobs and requeue up to this many due
--            retries, of any queue; 0 disables
--
-- Returns {2, name} when the queue does not exist (nothing written, no
-- sweep), {0} when it has no queued job, else {0, id, input} with input ''
-- when the job has none. The job becomes running: started_at = now, its id
-- goes to {ns}:running scored by its timeout/heartbeat deadline.

local q = ARGV[2]
if redis.call('EXISTS', KEYS[1]) == 0 then return {QUEUE_NOT_FOUND, q} end
local now = ARGV[3]
local now_ms = ms(now)
local limit = num(ARGV[4])
for _, id in ipairs(due_ids(k_running(), now_ms, limit)) do timeout_step(id, now, now_ms) end
for _, id in ipairs(due_ids(k_failed(), now_ms, limit)) do retry_step(id, now_ms) end

while true do
  local popped = redis.call('ZPOPMIN', k_pending(q))
  if #popped == 0 then return {OK} end
  local id = popped[1]
  local j = load_job(id)
  -- A pending id whose job is gone or not queued is stale: drop it.
  if j and j.status == 'queued' then
    local key = k_job(id)
    redis.call('HSET', key, 'status', 'running', 'started_at', now)
    j.status, j.queue, j.started_at, j.last_heartbeat = 'running', j.queue or q, now, nil
    redis.call('ZADD', k_running(), int_str(running_deadline(j)), id)
    attach_index(j, 'running')
    local input = redis.call('HGET', key, 'input')
    return {OK, id, input or ''}
  end
end
