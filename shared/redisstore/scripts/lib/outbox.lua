-- outbox.lua: effects, the work a script leaves for another partition or
-- the store's Go side.

-- effect records work for another partition (or for the store's Go side) in
-- this partition's outbox, in the same script as the change that causes it.
-- The store applies it right after the call and deletes it; the outbox sweep
-- re-applies what a crashed process left. Its id makes applying idempotent.
local function effect(e)
  local n = redis.call('HINCRBY', K.ctr, 'ob', 1)
  e.id = A.p .. '-' .. int_str(n)
  redis.call('HSET', K.ob, e.id, cjson.encode(e))
  redis.call('ZADD', K.obt, A.ms, e.id)
  A.effects = A.effects or {}
  A.effects[#A.effects + 1] = e
end
