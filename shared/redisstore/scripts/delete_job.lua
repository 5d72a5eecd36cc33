-- delete_job.lua: delete a job in any status (DELETE /job/{id}), with every
-- index entry; its waiting dependents are cancelled.
--
-- A.id. Reply {}; errors job_not_found. Unreadable metadata is deleted too.

local j, why = load_job(A.id)
if why == 'job_not_found' then return fail(why) end
if j then
  remove_job(j, 'deleted')
else
  for _, k in ipairs({K.j, K.inp, K.out, K.err, K.hist}) do redis.call('HDEL', k, A.id) end
  for _, k in ipairs({K.run, K.due, K.exp}) do redis.call('ZREM', k, A.id) end
end
return reply({})
