-- apply.lua: apply an effect recorded in another partition's outbox to
-- this one (see outbox.lua's effect). Applying twice does nothing more.
--
-- A.effect -> {id, op, job, dep, why}:
--   depend: job (elsewhere) depends on dep (here): register it, or tell it
--           at once when dep already ended (or is gone)
--   dep:    dependency dep (elsewhere) of job (here) ended (why)
--   release: dep (here) ended (why): release the next of its dependents
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
    add_dependent(dj, e.job)
  end
elseif e.op == 'dep' then
  apply_dep(e.job, e.dep, e.why)
elseif e.op == 'release' then
  local dj = load_job(e.dep)
  if dj and not is_ended(dj) then
    -- Pending again since (a retry): the rest wait for its next end.
    if not dj.has_dependents then
      dj.has_dependents = 1
      save_job(dj)
    end
  else
    release_dependents(e.dep, e.why)
  end
end
redis.call('HSET', K.ap, e.id, '1')
redis.call('ZADD', K.apt, A.ms, e.id)
return reply({})
