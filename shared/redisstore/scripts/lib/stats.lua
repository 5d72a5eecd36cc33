-- stats.lua: global counters and per-queue daily statistics.

-- Global counters (Ocypod's /info statistics).
local function total(name) redis.call('HINCRBY', K.tot, name, 1) end

-- Per-minute counts of created (c), completed (d) and failed (f: failed or
-- timed out) jobs, for GET /queue/{name}/stats?by=minute: K.sm is the hash
-- of the hour of A.now (store.go's partKey), field "<queue> <minute><event>"
-- (minute 0-59). One increment per event; the hash expires MINUTE_TTL
-- seconds after a field's first count, so an hour is readable for the
-- next one and then goes away by itself.
local MINUTE_EVENT = {c = 'c', d = 'd', f = 'f', t = 'f'}
local MINUTE_TTL = 7200
local function minute_count(q, what)
  local ev = MINUTE_EVENT[what]
  if not ev then return end
  local f = q .. ' ' .. (math.floor(A.ms / 60000) % 60) .. ev
  if redis.call('HINCRBY', K.sm, f, 1) == 1 then redis.call('EXPIRE', K.sm, MINUTE_TTL) end
end

-- Per-queue daily statistics (qless's): counters (c created, d completed,
-- f failed, t timed out, r retried), and for wait and run times a
-- histogram bucket (one increment per event; the count, mean and variance
-- are read from the histogram). The day's hash expires A.stats_ttl seconds
-- after its first use. The counters also count by minute (minute_count).
local function stat_count(q, what)
  if redis.call('HINCRBY', K.st, q .. ' ' .. what, 1) == 1 then
    redis.call('EXPIRE', K.st, A.stats_ttl)
  end
  minute_count(q, what)
end

local function bucket(secs)
  local s = math.floor(secs)
  if s < 60 then return math.max(s, 0) end
  if s < 3600 then return 59 + math.floor(s / 60) end
  if s < 86400 then return 118 + math.floor(s / 3600) end
  return math.min(141 + math.floor(s / 86400), 171)
end

local function stat_time(q, what, since_us)
  local d = ms(A.now) - ms(since_us)
  if d < 0 then d = 0 end
  stat_count(q, what .. bucket(d / 1000))
end
