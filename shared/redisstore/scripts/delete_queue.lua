-- delete_queue.lua: delete a queue in this partition (DELETE /queue/{name})
-- and start dropping its pending jobs.
--
-- A.queue. The settings go at once (the queue is gone for clients); the
-- queue's queued, scheduled and waiting jobs of this generation and older
-- ones are then dropped in slices by drop_queue.lua (the request's first,
-- then the sweeper's), so a big queue never blocks Redis. Until then they
-- are counted in the drop record (see generations.lua's drop_of) and ignored by
-- every read, also by a queue created again under the same name. Running
-- and ended jobs stay. Reply {}; errors queue_not_found.

local q = A.queue
local s = decode(redis.call('HGET', K.q, q))
if not s then return fail('queue_not_found') end
redis.call('HDEL', K.q, q, q .. ' w', q .. ' d')
redis.call('HDEL', K.rl, q)
redis.call('DEL', K.wake)
-- Every pending job of the name here is of this generation or an older one.
local c = {}
for _, code in ipairs({'q', 's', 'w'}) do
  local lo, hi = lex_range(q .. ' ' .. code)
  c[code] = redis.call('ZLEXCOUNT', K.idx, lo, hi)
end
local g = num(s.g)
local d = drop_of(q)
if d and num(d.g) > g then g = num(d.g) end
save_drop(q, {g = g, r = 1, c = c})
for _, m in ipairs(redis.call('ZRANGEBYLEX', K.schl, lex_range(q))) do
  redis.call('HDEL', K.sch, m)
  redis.call('ZREM', K.scht, m)
  redis.call('ZREM', K.schl, m)
end
return reply({})
