-- delete_queue.lua: delete a queue in this partition (DELETE /queue/{name})
-- and start dropping its pending jobs.
--
-- A.queue. The settings go at once (the queue is gone for clients); the
-- queue's queued, scheduled and waiting jobs of this generation are then
-- dropped in slices by drop_queue.lua (the request's first, then the
-- sweeper's), so a big queue never blocks Redis. Running and ended jobs
-- stay. Reply {}; errors queue_not_found.

local q = A.queue
local s = decode(redis.call('HGET', K.q, q))
if not s then return fail('queue_not_found') end
redis.call('HDEL', K.q, q, q .. ' w', q .. ' d')
redis.call('HDEL', K.rl, q)
redis.call('DEL', K.wake)
redis.call('HSET', K.drop, q, cjson.encode({g = s.g, r = 1}))
for _, m in ipairs(redis.call('ZRANGEBYLEX', K.schl, lex_range(q))) do
  redis.call('HDEL', K.sch, m)
  redis.call('ZREM', K.scht, m)
  redis.call('ZREM', K.schl, m)
end
return reply({})
