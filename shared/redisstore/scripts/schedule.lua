-- schedule.lua: store, delete, read or fire a queue's schedules (recurring
-- jobs), in the queue's home partition: K.sch "<queue> <id>" -> the
-- schedule, K.scht the same members by next firing (ms), K.schl by name.
--
-- A.op = 'put'    A.queue, A.id, A.doc (the schedule as JSON text), A.next
--                 (ms) -> {created}; error queue_not_found
-- A.op = 'delete' A.queue, A.id -> {}; error schedule_not_found
-- A.op = 'get'    A.queue, A.id (absent: every schedule of the queue) ->
--                 {schedules = [{id, doc, next}]}; without A.id, error
--                 queue_not_found
-- A.op = 'fire'   A.queue, A.id, A.due (ms: the firing the caller saw),
--                 A.next (ms: the one after), A.spec (the job to create) ->
--                 {fired}: the job is created through the outbox only if
--                 the schedule still falls due at A.due, so overlapping
--                 sweeps fire each due time once.

local member = A.queue .. ' ' .. (A.id or '')
if A.op == 'put' then
  if redis.call('HEXISTS', K.q, A.queue) == 0 then return fail('queue_not_found') end
  local created = redis.call('HSET', K.sch, member, A.doc) == 1
  redis.call('ZADD', K.scht, A.next, member)
  redis.call('ZADD', K.schl, 0, member)
  return cjson.encode({created = created})
elseif A.op == 'delete' then
  if redis.call('HDEL', K.sch, member) == 0 then return fail('schedule_not_found') end
  redis.call('ZREM', K.scht, member)
  redis.call('ZREM', K.schl, member)
  return '{}'
elseif A.op == 'get' then
  if not A.id and redis.call('HEXISTS', K.q, A.queue) == 0 then return fail('queue_not_found') end
  local members = {member}
  if not A.id then
    local lo, hi = lex_range(A.queue)
    members = redis.call('ZRANGEBYLEX', K.schl, lo, hi)
  end
  local out = {}
  for _, m in ipairs(members) do
    local doc = redis.call('HGET', K.sch, m)
    if doc then
      out[#out + 1] = {id = string.sub(m, #A.queue + 2), doc = doc, next = redis.call('ZSCORE', K.scht, m)}
    end
  end
  return cjson.encode({schedules = out})
elseif A.op == 'fire' then
  local due = redis.call('ZSCORE', K.scht, member)
  if not due or num(due) ~= num(A.due) then return reply({fired = false}) end
  redis.call('ZADD', K.scht, A.next, member)
  effect({op = 'create', queue = A.queue, spec = A.spec, from = 'schedule ' .. A.id, part = A.part})
  return reply({fired = true})
end
return fail('invalid', {field = 'op', reason = tostring(A.op)})
