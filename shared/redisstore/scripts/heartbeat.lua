-- heartbeat.lua: record a running job's heartbeat (PUT /job/{id}/heartbeat).
--
-- A.id, A.attempt (fencing, optional). Reply {}; errors job_not_found,
-- stale_attempt {attempt}, not_running. Moves the job's running deadline.

local j, why = load_job(A.id)
if not j then return fail(why) end
if A.attempt and num(A.attempt) ~= num(j.attempt) then
  return fail('stale_attempt', {attempt = num(j.attempt)})
end
if j.status ~= 'running' then return fail('not_running') end
j.last_heartbeat = A.now
save_job(j)
redis.call('ZADD', K.run, int_str(running_deadline(j)), j.id)
return reply({})
