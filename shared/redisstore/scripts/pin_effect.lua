-- pin_effect.lua: fix, once, the partition an effect of this partition's
-- outbox creates its job in (a dead letter, or an effect recorded by an
-- older version without one), so that every application of it — the
-- request's, the outbox sweep's, a late one — goes to the same partition
-- and finds the record of an earlier one there.
--
-- A.id   -> the effect; A.part -> the partition proposed by the caller
-- Reply {part = the effect's partition (A.part unless one was fixed
-- before)}, or {gone = true} when the effect is no longer in the outbox
-- (applied and acknowledged: nothing is left to do).

local s = redis.call('HGET', K.ob, A.id)
if not s then return cjson.encode({gone = true}) end
local e = decode(s)
if not e then return fail('corrupt') end
if e.part then return cjson.encode({part = num(e.part)}) end
redis.call('HSET', K.ob, A.id, string.sub(s, 1, -2) .. ',"part":' .. int_str(num(A.part)) .. '}')
return cjson.encode({part = num(A.part)})
