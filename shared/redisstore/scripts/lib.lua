-- lib.lua: helpers shared by every script in this directory.
--
-- scripts.go prepends this file to each script body when it builds the
-- redis.Script values, so every script can use the names below. It only
-- defines locals (Redis forbids new globals in scripts) and runs no command.
--
-- Conventions of every script:
--   ARGV[1] -> key prefix "{<namespace>}:" (keys.go Prefix). Keys that are not
--              known before the script runs (job hashes, tags, per-queue keys)
--              are built here from it, with the same patterns as keys.go
--              (TestLuaKeysMatchGo compares them).
--   KEYS[1] -> one real key of the namespace, so a cluster client routes the
--              script to the slot of the namespace's hash tag.
--   Timestamps are integer microseconds since the epoch, passed and stored as
--   decimal strings: never hand a microsecond value to redis.call as a Lua
--   number (it would be formatted with %.14g). Sorted-set scores are integer
--   milliseconds, always formatted with int_str.
--   Write scripts reply {code, ...}; the codes are below (scripts.go mirrors
--   them).

local P = ARGV[1]

local OK, JOB_NOT_FOUND, QUEUE_NOT_FOUND, CONFLICT, NOT_RUNNING, CORRUPT = 0, 1, 2, 3, 4, 5

-- Key builders (keep in step with keys.go).
local function k_queues() return P .. 'queues' end
local function k_queue(q) return P .. 'queue:' .. q end
local function k_pending(q) return P .. 'queue:' .. q .. ':jobs' end
local function k_index(q, st) return P .. 'queue:' .. q .. ':' .. st end
local function k_jobqueues() return P .. 'jobqueues' end
local function k_seq() return P .. 'seq' end
local function k_job_id() return P .. 'job_id' end
local function k_job(id) return P .. 'job:' .. id end
local function k_running() return P .. 'running' end
local function k_failed() return P .. 'failed' end
local function k_ended() return P .. 'ended' end
local function k_tag(t) return P .. 'tag:' .. t end
local function k_stats() return P .. 'stats' end

-- Statuses with a per-queue index ZSET (queued jobs live in k_pending).
local INDEXED = {'running', 'failed', 'completed', 'cancelled', 'timed_out'}

local function num(v) return tonumber(v) or 0 end

-- int_str formats an integer-valued number exactly; values beyond 2^53 (or
-- NaN) become '+inf', which ZADD understands as "never".
local function int_str(x)
  if x ~= x or x >= 9007199254740992 then return '+inf' end
  if x <= -9007199254740992 then return '-inf' end
  return string.format('%d', x)
end

-- ms turns a stored microsecond timestamp into whole milliseconds.
local function ms(us) return math.floor(num(us) / 1000) end

-- decode parses JSON without raising; nil when it is not valid.
local function decode(s)
  if type(s) ~= 'string' then return nil end
  local ok, v = pcall(cjson.decode, s)
  if ok and type(v) == 'table' then return v end
  return nil
end

-- The job fields the scripts reason about.
local FIELDS = {'status', 'queue', 'retries', 'retries_attempted', 'timeout',
  'heartbeat_timeout', 'expires_after', 'started_at', 'ended_at',
  'last_heartbeat', 'retry_delays', 'tags', 'abandoned'}

-- load_job returns the job as a table (absent fields are nil; input only
-- when with_input is set), or nil when the hash is missing, has no status,
-- or is not a hash at all.
local function load_job(id, with_input)
  local r
  if with_input then
    r = redis.pcall('HMGET', k_job(id), 'input', unpack(FIELDS))
  else
    r = redis.pcall('HMGET', k_job(id), unpack(FIELDS))
  end
  if type(r) ~= 'table' or r.err then return nil end
  local j = {id = id}
  local off = 0
  if with_input then j.input, off = r[1], 1 end
  for i, f in ipairs(FIELDS) do
    if r[i + off] then j[f] = r[i + off] end
  end
  if not j.status then return nil end
  return j
end

-- exhausted: the job will not be retried automatically (no retries left,
-- or its retry was abandoned because its queue was deleted).
local function exhausted(j)
  local r = num(j.retries)
  return r <= 0 or num(j.retries_attempted) >= r or j.abandoned == '1'
end

-- Scores (integer ms). The +1 reproduces Ocypod's strict
-- "floor(now - t) > limit" on whole seconds.
local function running_deadline(j)
  local best = math.huge
  local t = num(j.timeout)
  if t > 0 then best = ms(j.started_at) + (t + 1) * 1000 end
  local h = num(j.heartbeat_timeout)
  if h > 0 then
    local d = ms(j.last_heartbeat or j.started_at) + (h + 1) * 1000
    if d < best then best = d end
  end
  return best
end

local function expiry_time(j)
  local e = num(j.expires_after)
  if e <= 0 then return math.huge end
  return ms(j.ended_at) + (e + 1) * 1000
end

local function retry_delay(j)
  local d = decode(j.retry_delays)
  if not d or #d == 0 then return 0 end
  return math.floor(num(d[num(j.retries_attempted) + 1] or d[#d]))
end

local function retry_due(j)
  return ms(j.ended_at) + retry_delay(j) * 1000
end

-- detach_all removes a job from every index it may be in: the global
-- running, failed and ended sets and all of its queue's sets.
local function detach_all(j)
  redis.call('ZREM', k_running(), j.id)
  redis.call('ZREM', k_failed(), j.id)
  redis.call('ZREM', k_ended(), j.id)
  if j.queue then
    redis.call('ZREM', k_pending(j.queue), j.id)
    for _, st in ipairs(INDEXED) do
      redis.call('ZREM', k_index(j.queue, st), j.id)
    end
  end
end

-- detach removes a job from the indexes its status puts it in (every
-- script keeps a job in exactly those), which costs two or three calls
-- instead of nine; a job with an unknown status gets detach_all.
local function detach(j)
  local st, q, id = j.status, j.queue, j.id
  if st == 'queued' then
    if q then redis.call('ZREM', k_pending(q), id) end
    return
  elseif st == 'running' then
    redis.call('ZREM', k_running(), id)
  elseif st == 'failed' or st == 'timed_out' then
    redis.call('ZREM', k_failed(), id)
    redis.call('ZREM', k_ended(), id)
  elseif st == 'completed' or st == 'cancelled' then
    redis.call('ZREM', k_ended(), id)
  else
    return detach_all(j)
  end
  if q then redis.call('ZREM', k_index(q, st), id) end
end

-- attach_index adds a job to its queue's index of status st. (Its queue is
-- already in k_jobqueues: it joined when the job was created, and leaves
-- only when the queue has no job left.)
local function attach_index(j, st)
  redis.call('ZADD', k_index(j.queue, st), j.id, j.id)
end

-- jq_cleanup forgets a queue name in k_jobqueues once it has no job left.
local function jq_cleanup(q)
  if redis.call('ZCARD', k_pending(q)) > 0 then return end
  for _, st in ipairs(INDEXED) do
    if redis.call('ZCARD', k_index(q, st)) > 0 then return end
  end
  redis.call('SREM', k_jobqueues(), q)
end

local function stat(name) redis.call('HINCRBY', k_stats(), name, 1) end

-- place_failed puts a failed or timed-out job where it waits: the failed set
-- until its retry is due, or the ended set when it will not be retried.
local function place_failed(j)
  if exhausted(j) then
    redis.call('ZADD', k_ended(), int_str(expiry_time(j)), j.id)
  else
    redis.call('ZADD', k_failed(), int_str(retry_due(j)), j.id)
  end
end

-- end_job completes or cancels a job.
local function end_job(j, st, now)
  redis.call('HSET', k_job(j.id), 'status', st, 'ended_at', now)
  detach(j)
  j.status, j.ended_at = st, now
  redis.call('ZADD', k_ended(), int_str(expiry_time(j)), j.id)
  attach_index(j, st)
  stat(st)
end

-- fail_job fails a job as 'failed' or 'timed_out'.
local function fail_job(j, st, now)
  redis.call('HSET', k_job(j.id), 'status', st, 'ended_at', now)
  detach(j)
  j.status, j.ended_at = st, now
  place_failed(j)
  attach_index(j, st)
  stat(st)
end

-- requeue_job puts a job at the back of its queue; auto marks a retry, which
-- uses one of the job's retries.
local function requeue_job(j, auto)
  local key = k_job(j.id)
  redis.call('HDEL', key, 'started_at', 'ended_at', 'last_heartbeat', 'output', 'abandoned')
  if auto then redis.call('HINCRBY', key, 'retries_attempted', 1) end
  redis.call('HSET', key, 'status', 'queued')
  detach(j)
  local seq = redis.call('INCR', k_seq())
  redis.call('ZADD', k_pending(j.queue), int_str(seq), j.id)
  redis.call('SADD', k_jobqueues(), j.queue)
  stat('retried')
end

-- remove_job deletes a job and every trace of it (DELETE /job and expiry).
local function remove_job(j)
  detach(j)
  local tags = decode(j.tags)
  if tags then
    for _, t in ipairs(tags) do
      if type(t) == 'string' then redis.call('ZREM', k_tag(t), j.id) end
    end
  end
  redis.call('DEL', k_job(j.id))
  if j.queue then jq_cleanup(j.queue) end
end

-- forget_id removes the id of a job whose hash vanished (or is unusable)
-- from every index; with the hash gone its queue is unknown, so every known
-- queue is visited. Tag sets cannot be cleaned without the hash.
local function forget_id(id)
  redis.call('ZREM', k_running(), id)
  redis.call('ZREM', k_failed(), id)
  redis.call('ZREM', k_ended(), id)
  for _, q in ipairs(redis.call('SUNION', k_queues(), k_jobqueues())) do
    redis.call('ZREM', k_pending(q), id)
    for _, st in ipairs(INDEXED) do
      redis.call('ZREM', k_index(q, st), id)
    end
    jq_cleanup(q)
  end
end

-- Sweep steps. Each handles one id taken from its index, re-checking the
-- job's state, and returns what happened: 'timed_out', 'retried',
-- 'abandoned', 'expired', 'dropped' (the id was removed from the index
-- because its job is gone or unusable) or 'skipped' (not due after all; its
-- score was corrected).

local function timeout_step(id, now, now_ms)
  local j = load_job(id)
  if not j then forget_id(id); return 'dropped' end
  if j.status ~= 'running' or not j.queue then
    redis.call('ZREM', k_running(), id)
    return 'dropped'
  end
  local due = running_deadline(j)
  if due > now_ms then
    redis.call('ZADD', k_running(), int_str(due), id)
    return 'skipped'
  end
  fail_job(j, 'timed_out', now)
  return 'timed_out'
end

local function retry_step(id, now_ms)
  local j = load_job(id)
  if not j then forget_id(id); return 'dropped' end
  if (j.status ~= 'failed' and j.status ~= 'timed_out') or not j.queue then
    redis.call('ZREM', k_failed(), id)
    return 'dropped'
  end
  if exhausted(j) then
    redis.call('ZREM', k_failed(), id)
    redis.call('ZADD', k_ended(), int_str(expiry_time(j)), id)
    return 'skipped'
  end
  local due = retry_due(j)
  if due > now_ms then
    redis.call('ZADD', k_failed(), int_str(due), id)
    return 'skipped'
  end
  if redis.call('EXISTS', k_queue(j.queue)) == 0 then
    -- The queue was deleted: give the retry up so the job ends and expires
    -- (upstream left it in 'failed' forever).
    redis.call('HSET', k_job(id), 'abandoned', '1')
    redis.call('ZREM', k_failed(), id)
    redis.call('ZADD', k_ended(), int_str(expiry_time(j)), id)
    return 'abandoned'
  end
  requeue_job(j, true)
  return 'retried'
end

local function expiry_step(id, now_ms)
  local j = load_job(id)
  if not j then forget_id(id); return 'dropped' end
  local st = j.status
  if st ~= 'completed' and st ~= 'cancelled' and st ~= 'failed' and st ~= 'timed_out' then
    redis.call('ZREM', k_ended(), id)
    return 'dropped'
  end
  local due = expiry_time(j)
  if due > now_ms then
    redis.call('ZADD', k_ended(), int_str(due), id)
    return 'skipped'
  end
  remove_job(j)
  return 'expired'
end

-- due_ids returns up to limit ids of index whose score is at most now_ms.
local function due_ids(index, now_ms, limit)
  if limit <= 0 then return {} end
  return redis.call('ZRANGEBYSCORE', index, '-inf', int_str(now_ms), 'LIMIT', '0', int_str(limit))
end

-- next_score is the lowest score left in index, '' when it is empty.
local function next_score(index)
  local r = redis.call('ZRANGE', index, 0, 0, 'WITHSCORES')
  if #r < 2 then return '' end
  return r[2]
end

--------------------------------------------------------------------------
