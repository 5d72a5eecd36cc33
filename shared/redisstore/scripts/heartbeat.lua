-- heartbeat.lua: record a running job's heartbeat (PUT /job/{id}/heartbeat).
--
-- KEYS[1] -> {ns}:job:<id>  HASH of the job
-- ARGV[1] -> key prefix
-- ARGV[2] -> job id
-- ARGV[3] -> now, microseconds
--
-- Returns {0} on success, {1} when the job does not exist, {4} when it is
-- not running (nothing written). Sets last_heartbeat and moves the job's
-- deadline in {ns}:running.

local j = load_job(ARGV[2])
if not j then return {JOB_NOT_FOUND} end
if j.status ~= 'running' then return {NOT_RUNNING} end
redis.call('HSET', KEYS[1], 'last_heartbeat', ARGV[3])
j.last_heartbeat = ARGV[3]
redis.call('ZADD', k_running(), int_str(running_deadline(j)), j.id)
return {OK}
