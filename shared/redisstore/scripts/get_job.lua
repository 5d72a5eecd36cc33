-- get_job.lua: everything stored about a job (GET /job/{id}), read-only.
--
-- A.id, A.parts -> which of 'input', 'output', 'error', 'history',
-- 'dependents' to read besides the metadata.
-- Reply {meta, input?, output?, error?, history?, dependents?} as the stored
-- texts; errors job_not_found.

local meta = redis.call('HGET', K.j, A.id)
if not meta then return fail('job_not_found') end
local t = {meta = meta}
local from = {input = K.inp, output = K.out, error = K.err, history = K.hist, dependents = K.deps}
for _, part in ipairs(A.parts) do
  local v = redis.call('HGET', from[part], A.id)
  if v then t[part] = v end
end
return cjson.encode(t)
