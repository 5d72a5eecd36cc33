-- set_output.lua: replace a running job's output (PUT /job/{id}/output).
--
-- A.id, A.output (JSON text, 'null' allowed), A.attempt (fencing, optional).
-- Reply {}; errors job_not_found, stale_attempt {attempt}, not_running.

local j, why = load_job(A.id)
if not j then return fail(why) end
if A.attempt and num(A.attempt) ~= num(j.attempt) then
  return fail('stale_attempt', {attempt = num(j.attempt)})
end
if j.status ~= 'running' then return fail('not_running') end
redis.call('HSET', K.out, j.id, A.output)
return reply({})
