-- apply.lua: apply an effect recorded in another partition's outbox to
-- this one (see lib.lua's effect). Applying twice does nothing more.
--
-- A.effect -> {id, op, job, dep, why}:
--   depend: job (elsewhere) depends on dep (here): register it, or tell it
--           at once when dep already ended (or is gone)
--   dep:    dependency dep (elsewhere) of job (here) ended (why)
-- Reply {} (+ woken, effects).

local e = A.effect
if redis.call('HEXISTS', K.ap, e.id) == 1 then return reply({}) end
if e.op == 'depend' then
  local dj = load_job(e.dep)
  if not dj then
    NOTES[#NOTES + 1] = {job = e.job, dep = e.dep, why = 'deleted'}
  elseif dj.status == 'completed' or is_ended(dj) then
    NOTES[#NOTES + 1] = {job = e.job, dep = e.dep, why = dj.status}
  else
    local ds = decode(redis.call('HGET', K.deps, e.dep)) or {}
    local dup = false
    for _, x in ipairs(ds) do if x == e.job then dup = true end end
    if not dup then ds[#ds + 1] = e.job end
    redis.call('HSET', K.deps, e.dep, cjson.encode(ds))
    if not dj.has_dependents then
      dj.has_dependents = 1
      save_job(dj)
    end
  end
elseif e.op == 'dep' then
  apply_dep(e.job, e.dep, e.why)
end
redis.call('HSET', K.ap, e.id, '1')
redis.call('ZADD', K.apt, A.ms, e.id)
return reply({})
