-- upgrade_counters.lua: the upgrade that gives each queue its counter of
-- queued jobs ("<queue> n" in K.q, indexes.lua's count_queued), one call
-- per batch of queues of this partition (upgrade_counters.go).
--
-- A.limit -> the most queues one call counts. Queues are taken in the
-- order of idx (each queue's members are one range), from the one after
-- K.ctr's "cnm" (the last queue a call counted); "cnd" is set once every
-- queue here is counted, and the counting stops. A queue counted again
-- gets the same count (the count of its queued range at that moment), so
-- a call can run twice, also after the layout is recorded. Reply {done =
-- queues counted, more = this partition has more to count}.

if redis.call('HEXISTS', K.ctr, 'cnd') == 1 then return cjson.encode({done = 0, more = false}) end
local limit = num(A.limit)
local q = redis.call('HGET', K.ctr, 'cnm')
local n = 0
while n < limit do
  -- The next queue: the first idx member past every member of the last.
  local m = redis.call('ZRANGEBYLEX', K.idx, q and ('[' .. q .. '!') or '-', '+', 'LIMIT', 0, 1)[1]
  local nq = m and string.match(m, '^(%S+) ')
  if not nq then
    redis.call('HSET', K.ctr, 'cnd', 1)
    redis.call('HDEL', K.ctr, 'cnm')
    return cjson.encode({done = n, more = false})
  end
  q = nq
  recount_queued(q)
  n = n + 1
end
redis.call('HSET', K.ctr, 'cnm', q)
return cjson.encode({done = n, more = true})
