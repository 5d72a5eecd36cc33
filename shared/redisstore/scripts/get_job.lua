-- get_job.lua: everything stored about a job (GET /job/{id}), read-only
-- unless A.watch is set.
--
-- A.id, A.parts -> which of 'input', 'output', 'error', 'history',
-- 'dependents', 'callback' (its state, cbs) to read besides the metadata.
-- A.watch -> (ms) a waiting GET /job/{id}?wait=: unless the job has ended
-- for good, its queue is marked as having a job waited for until then
-- ("<queue> j" in q), so the script that ends it (after_end) names it in
-- its reply and the store wakes the waiters.
-- Reply {meta, input?, output?, error?, history?, dependents?, watched?}
-- as the stored texts, watched = true when the mark was made; errors
-- job_not_found.

local meta = redis.call('HGET', K.j, A.id)
if not meta then return fail('job_not_found') end
local t = {meta = meta}
local from = {input = K.inp, output = K.out, error = K.err, history = K.hist, callback = K.cbs}
for _, part in ipairs(A.parts) do
  if part == 'dependents' then
    local ds = dependents_of(A.id)
    if #ds > 0 then t[part] = cjson.encode(ds) end
  else
    local v = redis.call('HGET', from[part], A.id)
    if v then t[part] = v end
  end
end
if A.watch then
  local j = load_job(A.id)
  if j and not is_ended(j) then
    local f = j.queue .. ' j'
    if num(redis.call('HGET', K.q, f)) < num(A.watch) then redis.call('HSET', K.q, f, int_str(num(A.watch))) end
    t.watched = true
  end
end
return cjson.encode(t)
