-- queue_jobs.lua: a queue's job ids by status (GET /queue/{name}/job_ids)
-- or its number of queued jobs (GET /queue/{name}/size), read-only.
--
-- A.queue, A.size_only. Reply {size} or {ids = {status code = [ids]}} (queued
-- in take order, the others by id); errors queue_not_found (not registered
-- here).

local q = A.queue
if redis.call('HEXISTS', K.q, q) == 0 then return fail('queue_not_found') end
if A.size_only then
  local lo, hi = lex_range(q .. ' q')
  return cjson.encode({size = redis.call('ZLEXCOUNT', K.idx, lo, hi)})
end
local ids = {}
for _, code in pairs(CODE) do
  local lo, hi = lex_range(q .. ' ' .. code)
  local list = {}
  for _, m in ipairs(redis.call('ZRANGEBYLEX', K.idx, lo, hi)) do list[#list + 1] = id_of_member(m) end
  if #list > 0 then ids[code] = list end
end
return cjson.encode({ids = ids})
