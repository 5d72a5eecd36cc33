-- delete_job.lua: delete a job in any state (DELETE /job/{id}).
--
-- KEYS[1] -> {ns}:job:<id>  HASH of the job
-- ARGV[1] -> key prefix
-- ARGV[2] -> job id
--
-- Returns {0} when the job was deleted, {1} when no such key exists. Removes
-- the hash, the id from every index (pending, running, failed, ended,
-- per-queue sets, tag sets) and forgets the queue name in {ns}:jobqueues when
-- it was the queue's last job. A corrupt hash (no status, not even a hash) is
-- deleted too, with its id removed from every index.

if redis.call('EXISTS', KEYS[1]) == 0 then return {JOB_NOT_FOUND} end
local j = load_job(ARGV[2])
if j then
  remove_job(j)
else
  redis.call('DEL', KEYS[1])
  forget_id(ARGV[2])
end
return {OK}
