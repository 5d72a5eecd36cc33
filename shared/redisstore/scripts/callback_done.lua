-- callback_done.lua: record one try of job A.id's callback.
--
-- A.ended -> the ending the try was for (ms; a newer ending's callback is
-- left alone); A.delivered -> the URL answered 2xx; else A.retry_at -> when
-- to try again (ms), or A.give_up -> no more tries (counted in tot as
-- callbacks_given_up).
--
-- Reply {}.

local st = decode(redis.call('HGET', K.cbs, A.id))
if not st or num(st.e) ~= num(A.ended) or st.d then return reply({}) end
st.a = num(st.a) + 1
if A.delivered then
  st.d = A.ms
  redis.call('ZREM', K.cbq, A.id)
elseif A.give_up then
  st.g = 1
  redis.call('ZREM', K.cbq, A.id)
  redis.call('HINCRBY', K.tot, 'callbacks_given_up', 1)
else
  redis.call('ZADD', K.cbq, int_str(num(A.retry_at)), A.id)
end
redis.call('HSET', K.cbs, A.id, cjson.encode(st))
return reply({})
