-- patch_queue.lua: merge settings into a queue (PATCH /queue/{name}) in its
-- home partition.
--
-- A.queue, A.set -> the settings to set (short names as stored: t h e r d
-- pa c rl bo tr dl k), A.clear -> names of settings to remove. Or
-- A.members -> the shard indexes that share the queue's limits now (m; see
-- limits.lua, shard_targets), set only while the settings are at version
-- A.if_v (else the reply has stale = true and nothing changes).
-- Reply {settings = the new settings as JSON text, span = the partitions the
-- queue spanned before}; errors queue_not_found, invalid {field, reason}.
-- A queue's shards only grow its span: jobs already in a partition stay
-- reachable there, and a partition shares the limits until the store finds
-- it has no job left to serve (shares.lua). Every change counts a version
-- (v), which the copies' limit shares follow.

local q = A.queue
local text = redis.call('HGET', K.q, q)
local s = decode(text)
if not s then return fail('queue_not_found') end
local old = decode(text)
local span = num(s.s)
if A.members then
  if num(s.v) ~= num(A.if_v) then return reply({settings = text, span = span, stale = true}) end
  s.m = A.members
end
for f, v in pairs(A.set or {}) do s[f] = v end
for _, f in ipairs(A.clear or {}) do s[f] = nil end
local k = math.max(num(s.k), 1)
if s.m then
  -- The shards new jobs go to always share the limits.
  local has = {}
  for _, i in ipairs(s.m) do has[num(i)] = true end
  for i = 0, k - 1 do
    if not has[i] then s.m[#s.m + 1] = i end
  end
  table.sort(s.m)
end
if k > 1 and num(s.c) > 0 and num(s.c) < k then
  return fail('invalid', {field = 'concurrency', reason = 'must be 0 or at least shards (' .. k .. ')'})
end
if k > 1 and s.rl and num(s.rl.b) < k then
  return fail('invalid', {field = 'rate_limit', reason = 'burst must be at least shards (' .. k .. ')'})
end
if k > span then s.s = k end
-- A queue that spreads from one partition has all its keys at its home,
-- where this version keeps them (kh): keyed creates need not look elsewhere.
if span <= 1 and num(s.s) > 1 then s.kh = 1 end
s.v = num(s.v) + 1
-- A rate limit set where there was none starts with full buckets in every
-- copy (rv: the version that set it; limits.lua, set_allowance).
if not s.rl then s.rv = nil elseif not old.rl then s.rv = s.v end
text = cjson.encode(s)
redis.call('HSET', K.q, q, text)
set_allowance(q, old, s)
-- A resume or a higher limit may let a waiting take have a job (the store
-- wakes it once every shard has the new settings).
local _, waiting = queue_settings(q)
wake(q, waiting)
return reply({settings = text, span = span})
