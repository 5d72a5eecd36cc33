-- callbacks.lua: claim the due callbacks of this partition for sending.
--
-- A.limit -> most callbacks to claim; A.lease -> ms a claimed callback is
-- held before it is due again (a sender that dies mid-POST: it is sent
-- again after the lease).
--
-- Reply {due = [{id, callback (sealed text), tries, ended (ms)}], next =
-- ms of the earliest callback still pending here, or nil}. A callback
-- whose job is gone is dropped.

local out = {}
local ids = redis.call('ZRANGEBYSCORE', K.cbq, '-inf', A.ms, 'LIMIT', 0, num(A.limit))
for _, id in ipairs(ids) do
  local j = load_job(id)
  local st = decode(redis.call('HGET', K.cbs, id))
  if not j or not j.callback or not st then
    redis.call('ZREM', K.cbq, id)
    redis.call('HDEL', K.cbs, id)
  else
    redis.call('ZADD', K.cbq, int_str(A.ms + num(A.lease)), id)
    out[#out + 1] = {id = id, callback = j.callback, tries = num(st.a), ended = num(st.e)}
  end
end
local first = redis.call('ZRANGE', K.cbq, 0, 0, 'WITHSCORES')
return reply({due = out, next = first[2] and num(first[2]) or nil})
