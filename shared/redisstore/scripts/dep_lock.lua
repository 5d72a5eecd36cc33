-- dep_lock.lua: the lease lock that serializes changes of an existing
-- job's dependencies (deps.go), in partition 0, and their fence numbers.
--
-- A.op = 'lock', A.token, A.lease (ms) -> {fence}: taken, with a fence
--        number larger than any handed out before; {held = ms}: another
--        holder has it for up to ms more
-- A.op = 'unlock', A.token -> {}: released when it is still this token's

if A.op == 'lock' then
  if redis.call('SET', K.dlk, A.token, 'NX', 'PX', A.lease) then
    return cjson.encode({fence = redis.call('INCR', K.dfc)})
  end
  return cjson.encode({held = redis.call('PTTL', K.dlk)})
end
if redis.call('GET', K.dlk) == A.token then redis.call('DEL', K.dlk) end
return '{}'
