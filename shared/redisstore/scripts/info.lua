-- info.lua: per-queue counts and the global statistics (/info).
--
-- KEYS[1] -> {ns}:queues  SET of registered queue names
-- ARGV[1] -> key prefix
--
-- Returns {0, stats, q1, q2, ...}: stats is the HGETALL of {ns}:stats
-- (field, value, ...); each qN is {name, queued, running, failed, completed,
-- cancelled, timed_out}. Queues are the registered ones plus deleted ones
-- that still have jobs. O(queues). Read-only.

local r = {OK, redis.call('HGETALL', k_stats())}
for _, q in ipairs(redis.call('SUNION', KEYS[1], k_jobqueues())) do
  local c = {q, redis.call('ZCARD', k_pending(q))}
  for _, st in ipairs(INDEXED) do
    c[#c + 1] = redis.call('ZCARD', k_index(q, st))
  end
  r[#r + 1] = c
end
return r
