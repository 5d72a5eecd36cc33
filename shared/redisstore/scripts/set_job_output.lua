-- set_job_output.lua: replace a running job's output (PUT /job/{id}/output).
--
-- KEYS[1] -> {ns}:job:<id>  HASH of the job
-- ARGV[1] -> key prefix
-- ARGV[2] -> job id
-- ARGV[3] -> output as compact JSON ('null' allowed)
--
-- Returns {0} on success, {1} when the job does not exist, {4} when it is
-- not running (nothing written).

local j = load_job(ARGV[2])
if not j then return {JOB_NOT_FOUND} end
if j.status ~= 'running' then return {NOT_RUNNING} end
redis.call('HSET', KEYS[1], 'output', ARGV[3])
return {OK}
