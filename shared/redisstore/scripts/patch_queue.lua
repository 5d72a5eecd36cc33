-- patch_queue.lua: merge settings into a queue (PATCH /queue/{name}) in its
-- home partition.
--
-- A.queue, A.set -> the settings to set (short names as stored: t h e r d
-- pa c rl bo tr dl k), A.clear -> names of settings to remove.
-- Reply {settings = the new settings as JSON text, span = the partitions the
-- queue spanned before}; errors queue_not_found, invalid {field, reason}.
-- A queue's shards only grow its span: jobs already in a partition stay
-- reachable there.

local q = A.queue
local s = decode(redis.call('HGET', K.q, q))
if not s then return fail('queue_not_found') end
local span = num(s.s)
for f, v in pairs(A.set) do s[f] = v end
for _, f in ipairs(A.clear or {}) do s[f] = nil end
local k = math.max(num(s.k), 1)
if k > 1 and num(s.c) > 0 and num(s.c) < k then
  return fail('invalid', {field = 'concurrency', reason = 'must be 0 or at least shards (' .. k .. ')'})
end
if k > 1 and s.rl and num(s.rl.b) < k then
  return fail('invalid', {field = 'rate_limit', reason = 'burst must be at least shards (' .. k .. ')'})
end
if k > span then s.s = k end
local text = cjson.encode(s)
redis.call('HSET', K.q, q, text)
return reply({settings = text, span = span})
