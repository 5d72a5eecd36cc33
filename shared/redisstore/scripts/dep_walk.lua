-- dep_walk.lua: one step of the dependency cycle check (deps.go): what the
-- jobs A.ids of this partition wait on.
--
-- A.ids   -> job ids of this partition
-- A.fence -> (optional) the checking change's fence number: refused when a
--            change with a larger one has read or written here, else
--            recorded as having read here (dfn keeps the largest)
-- Reply {w}: for each of A.ids in order, the ids it waits on (none when
-- it is gone or ended); errors: fenced.

if A.fence then
  local f = num(redis.call('GET', K.dfn))
  if f > A.fence then return fail('fenced') end
  if f < A.fence then redis.call('SET', K.dfn, A.fence) end
end
local w = {}
for i, id in ipairs(A.ids) do
  local j = load_job(id)
  w[i] = j and not is_ended(j) and decode(j.waiting_on) or {}
end
return cjson.encode({w = w})
