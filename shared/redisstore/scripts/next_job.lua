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
-- sweep), else {0, id, input, timed_out_ids, retried_ids, abandoned_ids}:
-- id and input are '' when the queue has no queued job (input is also ''
-- when the job has none); the id lists report the inline sweep. The job
-- becomes running: started_at = now, its id goes to {ns}:running scored by
-- its timeout/heartbeat deadline.

local q = ARGV[2]
if redis.call('EXISTS', KEYS[1]) == 0 then return {QUEUE_NOT_FOUND, q} end
local now = ARGV[3]
local now_ms = ms(now)
local limit = num(ARGV[4])
local timed_out, retried, abandoned = {}, {}, {}
for _, id in ipairs(due_ids(k_running(), now_ms, limit)) do
  if timeout_step(id, now, now_ms) == 'timed_out' then timed_out[#timed_out + 1] = id end
end
for _, id in ipairs(due_ids(k_failed(), now_ms, limit)) do
  local r = retry_step(id, now_ms)
  if r == 'retried' then retried[#retried + 1] = id
  elseif r == 'abandoned' then abandoned[#abandoned + 1] = id end
end

while true do
  local popped = redis.call('ZPOPMIN', k_pending(q))
  if #popped == 0 then return {OK, '', '', timed_out, retried, abandoned} end
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
    return {OK, id, input or '', timed_out, retried, abandoned}
  end
end
