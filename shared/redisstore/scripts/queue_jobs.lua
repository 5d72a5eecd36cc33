-- queue_jobs.lua: a queue's job ids by status (GET /queue/{name}/job_ids)
-- or its number of queued jobs (GET /queue/{name}/size), read-only.
-- Pending jobs of a deleted queue of the same name, not dropped yet, are
-- neither counted nor listed.
--
-- A.queue, A.size_only. The size is the queue's counter of queued jobs
-- ("<queue> n" in K.q, indexes.lua's count_queued). Reply {size} or {ids = {status code = [ids]}} (queued
-- in take order, the others by id); errors queue_not_found (not registered
-- here).

local q = A.queue
if redis.call('HEXISTS', K.q, q) == 0 then return fail('queue_not_found') end
local d = drop_of(q)
if A.size_only then
  local n = num(redis.call('HGET', K.q, q .. ' n'))
  if d and d.c then n = math.max(n - num(d.c.q), 0) end
  return cjson.encode({size = n})
end
local ids = {}
for _, code in pairs(CODE) do
  local lo, hi = lex_range(q .. ' ' .. code)
  local list = {}
  for _, m in ipairs(redis.call('ZRANGEBYLEX', K.idx, lo, hi)) do
    local id = id_of_member(m)
    local j = d and (code == 'q' or code == 's' or code == 'w') and load_job(id)
    if not (j and old_pending(j)) then list[#list + 1] = id end
  end
  if #list > 0 then ids[code] = list end
end
return cjson.encode({ids = ids})
