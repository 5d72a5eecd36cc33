-- put_queue.lua: create a queue or replace its Ocypod settings
-- (PUT /queue/{name}), in its home partition, or copy a sharded queue's
-- settings into one of its other partitions.
--
-- A.queue, A.settings -> the Ocypod settings {t, h, e, r, d}; A.home -> the
-- queue's home partition. A.replica -> the whole settings object to store
-- (a shard's copy), with its shard index A.index as x (the home's is 0).
-- Reply {created, settings = the stored settings as JSON text, below = a
-- copy's limit shares are below their targets (limits.lua, set_allowance:
-- shares only shrink here, shares.lua raises them)}. A new queue
-- gets a new generation (g), which tells its jobs from those of an earlier
-- queue of the same name that is still being dropped (a shard's copy keeps
-- that queue's drop record here going), and b = g: a job of a lower
-- generation (a retry, a dead letter of a job that ran before the delete)
-- never comes into it (generations.lua's old_generation).

local q = A.queue
if A.replica then
  local copy = cjson.decode(A.replica)
  copy.x = A.index
  local old = decode(redis.call('HGET', K.q, q))
  redis.call('HSET', K.q, q, cjson.encode(copy))
  return reply({created = false, settings = A.replica, below = set_allowance(q, old, copy)})
end
local cur = decode(redis.call('HGET', K.q, q))
local created = cur == nil
local s = cur
if not s then
  local g = redis.call('HINCRBY', K.ctr, 'gen', 1)
  s = {g = g, b = g, o = A.home, k = 1, s = 1}
end
for _, f in ipairs({'t', 'h', 'e', 'r', 'd'}) do s[f] = A.settings[f] end
local text = cjson.encode(s)
redis.call('HSET', K.q, q, text)
return reply({created = created, settings = text})
