-- stats.lua: the statistics: global counters (Ocypod's /info), per-queue
-- daily statistics and per-minute counts, each event one increment.

-- Global counters (Ocypod's /info statistics), for the events counted
-- nowhere else.
local function total(name) redis.call('HINCRBY', K.tot, name, 1) end

-- The figures, as they are read (stats.go):
--   K.tot           all-time counters: created, completed, failed,
--                   timed_out, cancelled, retried...
--   st:<day>        a day's per-queue statistics (qless's): counters
--                   "<q> c" created, "<q> d" completed, "<q> f" failed,
--                   "<q> t" timed out, "<q> r" retried (automatically),
--                   and histogram buckets "<q> w<b>" of wait times and
--                   "<q> r<b>" of run times. Expires A.stats_ttl seconds
--                   after a field's first count.
--   sm:<hour>       per-minute counts "<q> <minute><c|d|f>" (minute 0-59)
--                   of created, completed and failed (or timed out) jobs,
--                   for GET /queue/{name}/stats?by=minute. Expires
--                   MINUTE_TTL seconds after a field's first count.
-- An event counted in one figure only increments it (a take: its wait's
-- bucket in K.st; a cancel of a job not running, a requeue asked for:
-- K.tot). An event counted in several (a create, an attempt's end, an
-- automatic retry) increments one field of K.sp, the pending counts,
-- "<q> <minute since the epoch> <code><bucket>": the sweeps fold the past
-- minutes' into the figures above (fold_stats.lua), and every read adds
-- the fields still pending (PENDING says where each code counts). So each
-- event costs one increment.
local MINUTE_TTL = 7200

-- PENDING maps a pending code to the figures it counts in: tot, the K.tot
-- counter; day, the st counter; minute, the sm count. Codes that end an
-- attempt carry its run time's bucket after them (none when the job was
-- not running).
local PENDING = {
  c = {tot = 'created', day = 'c', minute = 'c'},   -- created
  y = {tot = 'retried', day = 'r'},                 -- retried automatically
  d = {tot = 'completed', day = 'd', minute = 'd'}, -- completed
  f = {tot = 'failed', day = 'f', minute = 'f'},    -- failed
  t = {tot = 'timed_out', day = 't', minute = 'f'}, -- timed out
  x = {tot = 'cancelled'},                          -- cancelled while running
  F = {day = 'f', minute = 'f'},                    -- failed by POST /job/{id}/retry
}

-- parse_pending splits a K.sp field into its queue, minute (since the
-- epoch), code (a PENDING key) and bucket ('' for none); nil when it is not
-- one.
local function parse_pending(f)
  local q, m, code, b = string.match(f, '^(%S+) (%d+) (%a)(%d*)$')
  if not q or not PENDING[code] then return nil end
  return q, num(m), code, b
end

-- pending_code is the code of a K.sp field (nil when it is not one), for
-- the reads that need nothing else.
local function pending_code(f) return string.match(f, '^%S+ %d+ (%a)%d*$') end

local function pending(q, code)
  redis.call('HINCRBY', K.sp, q .. ' ' .. math.floor(A.ms / 60000) .. ' ' .. code, 1)
end

local function bucket(secs)
  local s = math.floor(secs)
  if s < 60 then return math.max(s, 0) end
  if s < 3600 then return 59 + math.floor(s / 60) end
  if s < 86400 then return 118 + math.floor(s / 3600) end
  return math.min(141 + math.floor(s / 86400), 171)
end

-- bucket_since is the histogram bucket of the time from since_us to now.
local function bucket_since(since_us)
  local d = ms(A.now) - ms(since_us)
  if d < 0 then d = 0 end
  return bucket(d / 1000)
end

-- stat_created counts a job created in queue q.
local function stat_created(q) pending(q, 'c') end

-- stat_retried counts an automatic retry of a job of queue q.
local function stat_retried(q) pending(q, 'y') end

-- stat_wait counts a take: the time the job waited, queued since since_us.
local function stat_wait(q, since_us)
  local f = q .. ' w' .. bucket_since(since_us)
  if redis.call('HINCRBY', K.st, f, 1) == 1 then redis.call('EXPIRE', K.st, A.stats_ttl) end
end

-- stat_end counts the end of an attempt of a job of queue q (code, a
-- PENDING key) and, when it ran (started at started_us), its run time.
local function stat_end(q, code, ran, started_us)
  if ran then code = code .. bucket_since(started_us) end
  pending(q, code)
end

-- fold_add adds n to field f of the figures' hash key, which expires ttl
-- seconds after a field's first count; a field that is not a number stays
-- as it is.
local function fold_add(key, f, n, ttl)
  if redis.pcall('HINCRBY', key, f, n) == n then redis.call('EXPIRE', key, ttl) end
end
