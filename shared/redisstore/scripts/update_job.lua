-- update_job.lua: change a job's status and/or output (PATCH /job/{id}).
--
-- KEYS[1] -> {ns}:job:<id>  HASH of the job
-- ARGV[1] -> key prefix
-- ARGV[2] -> job id
-- ARGV[3] -> now, microseconds
-- ARGV[4] -> '1' to set the output to ARGV[5], '0' to leave it
-- ARGV[5] -> output as compact JSON
-- ARGV[6] -> target status, '' for none
-- ARGV[7] -> comma-separated statuses the target may be reached from
--            (ocypod.AllowedFrom, so the table lives only in Go)
--
-- Returns {0} on success, {1} when the job does not exist (even for an empty
-- update), {4} when an output is given and the job is not running,
-- {3, current} when the transition is not allowed, {2, queue} when a
-- requeue finds the job's queue deleted, {5, reason} for a corrupt job.
-- Nothing is written unless every check passes. Effects: completed and
-- cancelled end the job (ended set, expiry score); failed and timed_out wait
-- for a retry in the failed set, or end when no retry is left; queued puts
-- the job at the back of its queue with its run fields and output cleared
-- (retries_attempted unchanged).

local j = load_job(ARGV[2])
if not j then return {JOB_NOT_FOUND} end
local now, target = ARGV[3], ARGV[6]
if ARGV[4] == '1' and j.status ~= 'running' then return {NOT_RUNNING} end
if target ~= '' then
  if not string.find(',' .. ARGV[7] .. ',', ',' .. j.status .. ',', 1, true) then
    return {CONFLICT, j.status}
  end
  if not j.queue then return {CORRUPT, 'job has no queue'} end
  if target == 'queued' then
    if redis.call('EXISTS', k_queue(j.queue)) == 0 then return {QUEUE_NOT_FOUND, j.queue} end
  elseif target ~= 'completed' and target ~= 'cancelled' and target ~= 'failed' and target ~= 'timed_out' then
    return {CORRUPT, 'unsupported target status ' .. target}
  end
end

if ARGV[4] == '1' then redis.call('HSET', KEYS[1], 'output', ARGV[5]) end
if target == 'completed' or target == 'cancelled' then
  end_job(j, target, now)
elseif target == 'failed' or target == 'timed_out' then
  fail_job(j, target, now)
elseif target == 'queued' then
  requeue_job(j, false)
end
return {OK}
