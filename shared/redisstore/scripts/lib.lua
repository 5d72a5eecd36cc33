-- lib.lua: the helpers every script shares.
--
-- scripts.go builds each script as: a generated prelude, the blocks of this
-- file the script uses (directly or through other blocks), then the script.
-- The prelude defines
--   K -> the script's keys by name (K.j, K.idx, ...): scripts.go finds every
--        K.<name> the code mentions, passes those keys in KEYS (all of one
--        partition, so of one hash tag) and binds them here. A script never
--        builds a key name, so it runs on Redis Cluster and ElastiCache
--        Serverless, which refuse undeclared keys.
--   KW -> the per-queue wake lists of a take over several queues, in A.queues
--        order (only in scripts that mention KW).
--   A -> the call's one argument, decoded from JSON (ARGV[1]). Every call
--        carries A.now (microseconds since the epoch, a decimal string),
--        A.ms (milliseconds, a number), A.p (this partition) and A.P (the
--        partition count).
-- Scripts reply with one JSON object (see reply). Numbers that may exceed
-- 2^46 (ids, microsecond times, u64 settings) travel as decimal strings:
-- cjson formats numbers with 14 significant digits.
--
-- Data of a partition (doc.go describes it):
--   j     HASH id -> the job's metadata, a JSON object with short keys (META)
--   inp   HASH id -> input JSON (absent for null); out: id -> output JSON
--   err   HASH id -> the last error {"group","message"}; hist: earlier attempts
--   idx   ZSET, score 0: one member per job, "<queue> <status code> <sort>",
--         so each queue's jobs of one status are a contiguous range in the
--         order they are listed (queued: take order; others: by id).
--   run   ZSET id -> running deadline (ms); due: id -> due time (ms) of a
--         scheduled job or a pending retry; dq: "<queue> <due><id>" the same
--         jobs by queue, for takes; exp: id -> expiry time (ms) of an ended job
--   tag, trk, fg, wk: lex indexes "<text> <id>" of tags, tracked jobs,
--         failure groups and workers' jobs; fgc: group -> count
--   keys  HASH "p <queue> <key>" / "r <queue> <key>" -> pending / running id
-- Every index entry of a job follows from its metadata alone (attach and
-- detach below), so any script can remove exactly what it added.

-- Status codes of the idx members.
local CODE = {queued = 'q', running = 'r', failed = 'f', completed = 'c', cancelled = 'x',
  timed_out = 't', scheduled = 's', waiting = 'w'}

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

-- lp is a non-negative integer (or its decimal string) with its digit count
-- in front as a letter, so that byte order is numeric order: 9 -> 'a9',
-- 10 -> 'b10'.
local function lp(n)
  if type(n) == 'number' then n = int_str(n) end
  return string.char(96 + #n) .. n
end

-- esc makes user text safe in a lex member "<text> <rest>": no space is left
-- in it, and different texts stay different and never prefix one another's
-- "<text> " (queue names need none: they have no space or '!').
local ESC = {[' '] = '!a', ['!'] = '!b'}
local function esc(s) return (string.gsub(s, '[ !]', ESC)) end

-- lex_range is the ZRANGEBYLEX bounds of every member starting "<prefix> ".
local function lex_range(prefix) return '[' .. prefix .. ' ', '(' .. prefix .. '!' end

-- decode parses JSON without raising; nil when it is not valid or not a
-- table.
local function decode(s)
  if type(s) ~= 'string' then return nil end
  local ok, v = pcall(cjson.decode, s)
  if ok and type(v) == 'table' then return v end
  return nil
end

-- META maps the metadata fields to the short keys they are stored under.
-- List-valued fields (retry_delays, tags, depends_on, retry_backoff) are
-- kept as JSON text, so an empty list survives cjson (which writes {}).
local META = {
  queue = 'q', status = 's', gen = 'G',
  created_at = 'c', started_at = 'b', ended_at = 'f', last_heartbeat = 'l', queued_at = 'Q',
  timeout = 't', heartbeat_timeout = 'h', expires_after = 'e',
  retries = 'r', retries_attempted = 'n', retry_delays = 'd', retry_backoff = 'B',
  timeout_retries = 'T', timeouts_retried = 'N',
  tags = 'g', priority = 'p', sc = 'o', sr = 'O', due = 'u', run_at = 'a',
  attempt = 'A', worker = 'w', key = 'k', depends_on = 'D', waiting_on = 'W', blocked = 'K',
  has_dependents = 'H', tracked = 'R', abandoned = 'X', group = 'E', input = 'i',
}
-- LONG is META inverted (written out: a library's load runs no loop).
local LONG = {
  q = 'queue', s = 'status', G = 'gen', c = 'created_at', b = 'started_at', f = 'ended_at',
  l = 'last_heartbeat', Q = 'queued_at', t = 'timeout', h = 'heartbeat_timeout',
  e = 'expires_after', r = 'retries', n = 'retries_attempted', d = 'retry_delays',
  B = 'retry_backoff', T = 'timeout_retries', N = 'timeouts_retried', g = 'tags', p = 'priority',
  o = 'sc', O = 'sr', u = 'due', a = 'run_at', A = 'attempt', w = 'worker', k = 'key',
  D = 'depends_on', W = 'waiting_on', K = 'blocked', H = 'has_dependents', R = 'tracked',
  X = 'abandoned', E = 'group', i = 'input',
}

-- load_job returns the job id as a table of its metadata (absent fields are
-- nil), or nil and why: 'job_not_found', or 'corrupt' when its metadata is
-- unreadable (not JSON, no queue, an unknown status).
local function load_job(id)
  local s = redis.call('HGET', K.j, id)
  if not s then return nil, 'job_not_found' end
  local raw = decode(s)
  if not raw or type(raw.q) ~= 'string' or not CODE[raw.s or 'queued'] then return nil, 'corrupt' end
  local j = {id = id, status = 'queued'}
  for short, v in pairs(raw) do
    local long = LONG[short]
    if long then j[long] = v end
  end
  return j
end

-- ZERO_IS_NONE are the numeric fields whose 0 reads back the same when
-- absent (not timeout_retries, whose 0 differs from "not set").
local ZERO_IS_NONE = {timeout = true, heartbeat_timeout = true, expires_after = true, retries = true,
  retries_attempted = true, timeouts_retried = true, priority = true, sr = true, attempt = true, gen = true}

-- save_job writes a job's metadata, leaving out what reads back the same
-- when absent: empty and false fields, zero counts, the status queued.
local function save_job(j)
  local o = {}
  for long, v in pairs(j) do
    local short = META[long]
    if short and v ~= false and v ~= '' and not (ZERO_IS_NONE[long] and (v == 0 or v == '0')) then
      o[short] = v
    end
  end
  if j.status == 'queued' then o.s = nil end
  redis.call('HSET', K.j, j.id, cjson.encode(o))
end

-- partition_of is the partition holding job id.
local function partition_of(id) return num(id) % A.P end

-- prio_key sorts priorities highest first in as few bytes as possible for
-- the usual 0: 'm'; a higher priority p 'a' .. lp(1000000 - p); a lower
-- one 'z' .. lp(-p).
local function prio_key(p)
  if p == 0 then return 'm' end
  if p > 0 then return 'a' .. lp(1000000 - p) end
  return 'z' .. lp(-p)
end

-- The idx member of a job in its current status. A queued job sorts by
-- priority, then by (sc, sr), the order it was queued in, then by id; a job
-- queued when created has no sc stored: it is its id's sequence number.
local function idx_member(j)
  if j.status == 'queued' then
    local sr = num(j.sr)
    local sc = j.sc or (num(j.id) - A.p) / A.P
    return j.queue .. ' q ' .. prio_key(num(j.priority)) .. lp(sc) ..
      (sr > 0 and lp(sr) or '') .. ' ' .. j.id
  end
  return j.queue .. ' ' .. CODE[j.status] .. ' ' .. lp(j.id)
end

-- id_of_member is the job id at the end of an idx (or other lex) member.
local function id_of_member(m) return string.match(m, '(%d+)$') end

-- The running deadline (ms): the earlier of started_at + (timeout+1)s and
-- (last_heartbeat or started_at) + (heartbeat_timeout+1)s, for the limits
-- that are not zero. The +1 reproduces Ocypod's strict
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

-- is_ended: a job that ended for good (completed, cancelled, or failed or
-- timed out with no retry pending).
local function is_ended(j)
  local st = j.status
  return st == 'completed' or st == 'cancelled' or ((st == 'failed' or st == 'timed_out') and not j.due)
end

-- failure_group is the group a job that failed for good is listed under.
local function failure_group(j) return j.group or j.status end

-- SETTINGS remembers the decoded settings of the queues by their text: a
-- library's functions share it across calls (a script sent with EVALSHA
-- starts with an empty one), and text that changed is decoded again, so it
-- never serves stale settings. Bounded by dropping it all past 1000 queues.
local SETTINGS, SETTINGS_N = {}, 0

-- queue_settings is the settings of queue q in this partition (nil when the
-- queue does not exist here), whether a take waits on it (long-poll), and
-- the earliest time (ms) a job of q may fall due here: nil when unknown,
-- math.huge when none is pending (see note_due). One read per queue and
-- call (A.qs keeps it), so a script may ask again freely; a script that
-- changes the settings field reads no more after.
local function queue_settings(q)
  A.qs = A.qs or {}
  local c = A.qs[q]
  if not c then
    local r = redis.call('HMGET', K.q, q, q .. ' w', q .. ' d')
    c = {false, num(r[2]) > A.ms, r[3] and num(r[3])}
    if r[1] then
      local m = SETTINGS[q]
      if m and m[1] == r[1] then
        c[1] = m[2]
      else
        c[1] = decode(r[1]) or false
        if SETTINGS_N >= 1000 then SETTINGS, SETTINGS_N = {}, 0 end
        if not m then SETTINGS_N = SETTINGS_N + 1 end
        SETTINGS[q] = {r[1], c[1]}
      end
    end
    A.qs[q] = c
  end
  if not c[1] then return nil, false end
  return c[1], c[2], c[3]
end

-- note_due lowers queue q's earliest due time here (the "<q> d" field of
-- K.q) to due (ms), so takes promote the job once it falls due. The field
-- may be earlier than the truth (a due job left another way); a take then
-- looks once and corrects it.
local function note_due(q, due)
  local f = q .. ' d'
  local cur = redis.call('HGET', K.q, f)
  if not cur or num(cur) > due then redis.call('HSET', K.q, f, int_str(due)) end
end

-- wake tells long-polling takers of queue q that a job is ready: in the
-- script when it has the queue's wake list (K.wake), else through the reply
-- (A.woken collects queue names; the store pushes the token after the call).
local function wake(q, waiting)
  if not waiting then return end
  if K.wake and q == A.queue then
    redis.call('RPUSH', K.wake, '1')
  else
    A.woken = A.woken or {}
    A.woken[#A.woken + 1] = q
  end
end

-- detach removes the entries that a job's status gives it; attach adds
-- them. Tags and tracking do not depend on the status (see untag_all).
local function detach(j)
  redis.call('ZREM', K.idx, idx_member(j))
  local st = j.status
  if st == 'running' then
    redis.call('ZREM', K.run, j.id)
    if j.worker then redis.call('ZREM', K.wk, esc(j.worker) .. ' r ' .. lp(j.id)) end
  elseif j.due then
    redis.call('ZREM', K.due, j.id)
    redis.call('ZREM', K.dq, j.queue .. ' ' .. lp(j.due) .. lp(j.id))
  elseif is_ended(j) then
    if j.expires_after and num(j.expires_after) > 0 then redis.call('ZREM', K.exp, j.id) end
    if st == 'failed' or st == 'timed_out' then
      local g = failure_group(j)
      redis.call('ZREM', K.fg, esc(g) .. ' ' .. lp(j.id))
      if redis.call('HINCRBY', K.fgc, g, -1) <= 0 then redis.call('HDEL', K.fgc, g) end
    end
  end
  if st == 'timed_out' and j.worker then redis.call('ZREM', K.wk, esc(j.worker) .. ' t ' .. lp(j.id)) end
  if j.key then
    if st == 'running' then
      redis.call('HDEL', K.keys, 'r ' .. j.queue .. ' ' .. j.key)
    elseif st == 'queued' or st == 'scheduled' or st == 'waiting' then
      redis.call('HDEL', K.keys, 'p ' .. j.queue .. ' ' .. j.key)
    end
  end
end

local function attach(j)
  redis.call('ZADD', K.idx, 0, idx_member(j))
  local st = j.status
  if st == 'running' then
    redis.call('ZADD', K.run, int_str(running_deadline(j)), j.id)
    if j.worker then redis.call('ZADD', K.wk, 0, esc(j.worker) .. ' r ' .. lp(j.id)) end
  elseif j.due then
    redis.call('ZADD', K.due, int_str(j.due), j.id)
    redis.call('ZADD', K.dq, 0, j.queue .. ' ' .. lp(j.due) .. lp(j.id))
    note_due(j.queue, j.due)
    -- A waiting take sleeps until the earliest due time it saw: wake it to
    -- look again.
    local _, waiting = queue_settings(j.queue)
    wake(j.queue, waiting)
  elseif is_ended(j) then
    local e = expiry_time(j)
    if e ~= math.huge then redis.call('ZADD', K.exp, int_str(e), j.id) end
    if st == 'failed' or st == 'timed_out' then
      local g = failure_group(j)
      redis.call('ZADD', K.fg, 0, esc(g) .. ' ' .. lp(j.id))
      redis.call('HINCRBY', K.fgc, g, 1)
    end
  end
  if st == 'timed_out' and j.worker then redis.call('ZADD', K.wk, 0, esc(j.worker) .. ' t ' .. lp(j.id)) end
  if j.key then
    if st == 'running' then
      redis.call('HSET', K.keys, 'r ' .. j.queue .. ' ' .. j.key, j.id)
    elseif st == 'queued' or st == 'scheduled' or st == 'waiting' then
      redis.call('HSET', K.keys, 'p ' .. j.queue .. ' ' .. j.key, j.id)
    end
  end
end

-- settle stores a job whose new status is decided (after detach and the
-- change): its index entries, its metadata, and a wake-up for the takers
-- of its queue when it became queued.
local function settle(j)
  attach(j)
  save_job(j)
  if j.status == 'queued' then
    local _, waiting = queue_settings(j.queue)
    wake(j.queue, waiting)
  end
end

-- tags_of is a job's tags as a list (empty when none).
local function tags_of(j) return decode(j.tags) or {} end

local function tag_member(t, id) return esc(t) .. ' ' .. lp(id) end

-- untag_all removes the status-independent entries of a job: tags and
-- tracking.
local function untag_all(j)
  for _, t in ipairs(tags_of(j)) do
    if type(t) == 'string' then redis.call('ZREM', K.tag, tag_member(t, j.id)) end
  end
  if j.tracked then redis.call('ZREM', K.trk, j.queue .. ' ' .. lp(j.id)) end
end

-- Global counters (Ocypod's /info statistics).
local function total(name) redis.call('HINCRBY', K.tot, name, 1) end

-- Per-queue daily statistics (qless's): counters, and for wait and run times
-- a histogram bucket (one increment per event; the count, mean and
-- variance are read from the histogram). The day's hash expires
-- A.stats_ttl seconds after its first use.
local function stat_count(q, what)
  if redis.call('HINCRBY', K.st, q .. ' ' .. what, 1) == 1 then
    redis.call('EXPIRE', K.st, A.stats_ttl)
  end
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

-- effect records work for another partition (or for the store's Go side) in
-- this partition's outbox, in the same script as the change that causes it.
-- The store applies it right after the call and deletes it; the outbox sweep
-- re-applies what a crashed process left. Its id makes applying idempotent.
local function effect(e)
  local n = redis.call('HINCRBY', K.ctr, 'ob', 1)
  e.id = A.p .. '-' .. int_str(n)
  redis.call('HSET', K.ob, e.id, cjson.encode(e))
  redis.call('ZADD', K.obt, A.ms, e.id)
  A.effects = A.effects or {}
  A.effects[#A.effects + 1] = e
end

-- push_history appends the job's current attempt (which has ended) to its
-- history, keeping the last 20.
local function push_history(j)
  if not j.started_at then return end
  local h = decode(redis.call('HGET', K.hist, j.id)) or {}
  local e = {attempt = j.attempt or 1, worker = j.worker, started_at = j.started_at,
    ended_at = j.ended_at, status = j.status}
  local er = (j.status == 'failed' or j.status == 'timed_out') and decode(redis.call('HGET', K.err, j.id))
  if er then e.error = er end
  h[#h + 1] = e
  while #h > 19 do table.remove(h, 1) end
  redis.call('HSET', K.hist, j.id, cjson.encode(h))
end

-- set_queued puts j at the back of its priority in its queue: sort (o, O)
-- with o the partition's job counter now (seq for a new job) and O a counter
-- of requeues, so a requeued job goes after every job created so far.
local function set_queued(j, seq)
  j.status, j.due = 'queued', nil
  if seq then
    j.sc, j.sr = nil, nil -- its id's sequence number
  else
    j.sc = num(redis.call('HGET', K.ctr, 'id'))
    j.sr = redis.call('HINCRBY', K.ctr, 'rq', 1)
  end
  j.queued_at = A.now
  if j.queued_at == j.created_at then j.queued_at = nil end
end

-- make_runnable gives a job that is ready to be considered its status:
-- scheduled while its run_at is ahead, waiting while dependencies are
-- unfinished or another job with its key runs, else queued.
local function make_runnable(j, seq)
  if j.run_at and ms(j.run_at) > A.ms then
    j.status, j.due = 'scheduled', ms(j.run_at)
    j.sc, j.sr = nil, nil
  elseif j.waiting_on or j.blocked then
    j.status, j.due = 'waiting', nil
    j.sc, j.sr = nil, nil
  else
    set_queued(j, seq)
  end
end

-- key_holder is the id of the job holding slot ('p' pending, 'r' running)
-- of key k in queue q, or nil.
local function key_holder(slot, q, k)
  local id = redis.call('HGET', K.keys, slot .. ' ' .. q .. ' ' .. k)
  if id then return id end
  return nil
end

-- delay_of is the automatic retry delay (seconds) of a job's next retry.
local function delay_of(j)
  local n = num(j.retries_attempted)
  local bo = decode(j.retry_backoff)
  if bo then
    local d = math.min(num(bo.max), num(bo.min) * (num(bo.factor or 2) ^ n))
    if bo.jitter ~= false then d = d * num(A.rand) end
    return d
  end
  local d = decode(j.retry_delays)
  if d and #d > 0 then return num(d[n + 1] or d[#d]) end
  return 0
end

-- retry_due is when a job that just failed or timed out (status st) will be
-- retried (ms), or nil when it will not: no retry left in the budget it
-- draws from (timeout_retries for timeouts when set), or abandoned.
-- retry_at_ms overrides the policy's delay.
local function retry_due(j, st, retry_at_ms)
  if j.abandoned then return nil end
  local budget, used = num(j.retries), num(j.retries_attempted)
  if j.timeout_retries then
    local tn = num(j.timeouts_retried)
    if st == 'timed_out' then
      budget, used = num(j.timeout_retries), tn
    else
      used = used - tn
    end
  end
  if used >= budget then return nil end
  if retry_at_ms then return math.max(retry_at_ms, 0) end
  return ms(j.ended_at) + math.floor(delay_of(j) * 1000)
end

-- Work that follows a job's end: its dependents are told (here when they
-- live in this partition, else through the outbox), in a loop rather than by
-- recursion, since a cancellation can cascade down a chain of dependents.
local NOTES = {}

-- depend makes job j wait on the jobs deps (ids): each dependency of this
-- partition that is not completed is recorded as having j for dependent
-- (once), or, when it already ended otherwise or is gone, queues the note
-- that cancels j; those of other partitions learn it through the outbox.
-- Sets j.depends_on and j.waiting_on (nil when nothing is left to wait for).
local function depend(j, deps)
  j.depends_on = cjson.encode(deps)
  local left = {}
  for _, d in ipairs(deps) do
    d = tostring(d)
    if partition_of(d) == A.p then
      local dj = load_job(d)
      if not dj then
        left[#left + 1] = d
        NOTES[#NOTES + 1] = {job = j.id, dep = d, why = 'deleted'}
      elseif dj.status ~= 'completed' then
        left[#left + 1] = d
        if is_ended(dj) then
          NOTES[#NOTES + 1] = {job = j.id, dep = d, why = dj.status}
        else
          local ds = decode(redis.call('HGET', K.deps, d)) or {}
          local dup = false
          for _, x in ipairs(ds) do if x == j.id then dup = true end end
          if not dup then ds[#ds + 1] = j.id end
          redis.call('HSET', K.deps, d, cjson.encode(ds))
          if not dj.has_dependents then
            dj.has_dependents = 1
            save_job(dj)
          end
        end
      end
    else
      left[#left + 1] = d
      effect({op = 'depend', to = partition_of(d), job = j.id, dep = d})
    end
  end
  if #left > 0 then j.waiting_on = cjson.encode(left) else j.waiting_on = nil end
end

-- after_end runs the consequences of job j ending for good (completed,
-- cancelled, failed or timed out with no retry, deleted): its dependents
-- learn the outcome, and a job failed for good is copied to its queue's
-- dead letter queue. why is the end ('completed', 'cancelled', 'deleted'...).
local function after_end(j, why)
  if j.has_dependents then
    local ds = decode(redis.call('HGET', K.deps, j.id)) or {}
    for _, d in ipairs(ds) do NOTES[#NOTES + 1] = {job = d, dep = j.id, why = why} end
    redis.call('HDEL', K.deps, j.id)
    j.has_dependents = nil
  end
  if (why == 'failed' or why == 'timed_out') then
    local qs = queue_settings(j.queue)
    if qs and qs.dl and qs.dl ~= '' then
      local function get(k) return redis.call('HGET', k, j.id) or nil end
      effect({op = 'dlq', queue = qs.dl, job = j.id, meta = get(K.j), input = get(K.inp) or j.input,
        output = get(K.out), error = get(K.err)})
    end
  end
end

-- release_key frees key slot 'r' of a job that stops running and lets the
-- pending job blocked on it (if any) go on.
local function release_key(j)
  if not j.key then return end
  local pid = key_holder('p', j.queue, j.key)
  if not pid then return end
  local b = load_job(pid)
  if not b or not b.blocked or b.status ~= 'waiting' then return end
  detach(b)
  b.blocked = nil
  make_runnable(b)
  settle(b)
end

-- set_error records the error a worker reported with a failure (or the
-- store gave a cancelled dependent).
local function set_error(j, er)
  if er then
    redis.call('HSET', K.err, j.id, cjson.encode(er))
    j.group = er.group
  else
    redis.call('HDEL', K.err, j.id)
    j.group = nil
  end
end

-- finish completes or cancels j (any status the caller allowed).
local function finish(j, st, er)
  local was = j.status
  detach(j)
  j.status, j.ended_at, j.due = st, A.now, nil
  if er then set_error(j, er) end
  attach(j)
  save_job(j)
  total(st)
  if st == 'completed' then stat_count(j.queue, 'd') end
  if was == 'running' then
    stat_time(j.queue, 'r', j.started_at)
    release_key(j)
  end
  after_end(j, st)
end

-- fail_job fails running job j as 'failed' or 'timed_out'. o may carry the
-- reported error, retry = false (permanent) and retry_at (ms).
local function fail_job(j, st, o)
  o = o or {}
  detach(j)
  j.status, j.ended_at = st, A.now
  set_error(j, o.error)
  if o.retry == false then j.abandoned = true end
  j.due = retry_due(j, st, o.retry_at)
  attach(j)
  save_job(j)
  total(st)
  stat_count(j.queue, 'f')
  stat_time(j.queue, 'r', j.started_at)
  release_key(j)
  if not j.due then after_end(j, st) end
end

-- requeue puts j back in its queue (PATCH queued, an automatic or explicit
-- retry): its ended attempt goes to the history, its run fields and output
-- are cleared. auto counts a retry against the job's budget. Returns an
-- error code when its key's pending slot is taken by another job.
local function requeue(j, auto, detached)
  if j.key then
    local p = key_holder('p', j.queue, j.key)
    if p and p ~= j.id then return 'key_pending', p end
  end
  push_history(j)
  if not detached then detach(j) end
  if auto then
    if j.status == 'timed_out' and j.timeout_retries then j.timeouts_retried = num(j.timeouts_retried) + 1 end
    j.retries_attempted = num(j.retries_attempted) + 1
    stat_count(j.queue, 'r')
  end
  j.started_at, j.ended_at, j.last_heartbeat, j.abandoned, j.group = nil, nil, nil, nil, nil
  redis.call('HDEL', K.out, j.id)
  if j.key and key_holder('r', j.queue, j.key) then j.blocked = 1 end
  local qs, waiting = queue_settings(j.queue)
  if qs then j.gen = qs.g end
  make_runnable(j)
  attach(j)
  save_job(j)
  total('retried')
  if j.status == 'queued' then wake(j.queue, waiting) end
  return nil
end

-- start makes queued job j running for a taker.
local function start(j, worker)
  detach(j)
  stat_time(j.queue, 'w', j.queued_at or j.created_at)
  j.status, j.started_at, j.last_heartbeat, j.ended_at = 'running', A.now, nil, nil
  j.queued_at, j.sc, j.sr = nil, nil, nil
  j.attempt = num(j.attempt) + 1
  if worker and worker ~= '' then
    j.worker = worker
    redis.call('ZADD', K.wks, A.ms, worker)
  else
    j.worker = nil
  end
  attach(j)
  save_job(j)
end

-- apply_dep tells waiting job jid that its dependency dep ended (why):
-- 'completed' removes it from what the job waits on (the job goes on when
-- nothing is left); any other end cancels the job, naming the dependency.
-- Idempotent: a second delivery finds nothing to do.
local function apply_dep(jid, dep, why)
  local j = load_job(jid)
  if not j or not (j.status == 'waiting' or j.status == 'scheduled' or j.status == 'queued') then return end
  local left = decode(j.waiting_on)
  if not left then return end
  local rest, found = {}, false
  for _, d in ipairs(left) do
    if tostring(d) == tostring(dep) then found = true else rest[#rest + 1] = d end
  end
  if not found then return end
  if why ~= 'completed' then
    finish(j, 'cancelled', {group = 'dependency', message = 'dependency ' .. dep .. ' ' .. why})
    return
  end
  detach(j)
  if #rest == 0 then j.waiting_on = nil else j.waiting_on = cjson.encode(rest) end
  if j.status == 'waiting' then make_runnable(j) end
  settle(j)
end

-- drain_notes delivers the dependency outcomes queued by after_end.
local function drain_notes()
  local i = 1
  while i <= #NOTES do
    local n = NOTES[i]
    local to = partition_of(n.job)
    if to == A.p then
      apply_dep(n.job, n.dep, n.why)
    else
      effect({op = 'dep', to = to, job = n.job, dep = n.dep, why = n.why})
    end
    i = i + 1
  end
  NOTES = {}
end

-- reply encodes a script's result, after delivering pending notes, with the
-- queues to wake and the effects to apply. raw, when given, is a JSON text
-- spliced in as the field raw_name without re-encoding (a job's input).
local function reply(t, raw_name, raw)
  drain_notes()
  t.woken, t.effects = A.woken, A.effects
  local s = cjson.encode(t)
  if raw_name and raw then
    if s == '{}' then return '{"' .. raw_name .. '":' .. raw .. '}' end
    return string.sub(s, 1, -2) .. ',"' .. raw_name .. '":' .. raw .. '}'
  end
  return s
end

-- fail replies with an error code (and details); nothing was written.
local function fail(code, extra)
  local t = extra or {}
  t.err = code
  return cjson.encode(t)
end

-- remove_job deletes a job and every trace of it (DELETE /job, expiry, a
-- deleted queue's pending jobs).
local function remove_job(j, why)
  detach(j)
  untag_all(j)
  if j.status == 'running' then release_key(j) end
  redis.call('HDEL', K.j, j.id)
  redis.call('HDEL', K.inp, j.id)
  redis.call('HDEL', K.out, j.id)
  redis.call('HDEL', K.err, j.id)
  redis.call('HDEL', K.hist, j.id)
  if not is_ended(j) or j.has_dependents then after_end(j, why) end
end

-- abandon ends the pending retry of failed or timed-out job j: its queue is
-- gone, or another job holds its key's pending slot.
local function abandon(j)
  detach(j)
  j.due, j.abandoned = nil, true
  attach(j)
  save_job(j)
  after_end(j, j.status)
end

-- promote moves on a job whose due time has come: a scheduled job becomes
-- queued (or waiting); a pending retry is requeued, or abandoned when its
-- queue was deleted or its key is taken.
local function promote(j)
  if j.status == 'scheduled' then
    detach(j)
    make_runnable(j)
    settle(j)
    return 'promoted'
  end
  if not queue_settings(j.queue) then
    abandon(j)
    return 'abandoned'
  end
  if requeue(j, true) then
    abandon(j)
    return 'abandoned'
  end
  return 'retried'
end

-- Sweep steps: each handles one id taken from its index, re-checking the
-- job, and returns what happened: 'timed_out', 'retried', 'promoted',
-- 'abandoned', 'expired', 'skipped' (not due after all: its score was
-- corrected) or 'dropped' (the entry had no job in that state: removed).
local function timeout_step(id)
  local j = load_job(id)
  if not j or j.status ~= 'running' then
    redis.call('ZREM', K.run, id)
    return 'dropped'
  end
  local due = running_deadline(j)
  if due > A.ms then
    redis.call('ZADD', K.run, int_str(due), id)
    return 'skipped'
  end
  fail_job(j, 'timed_out')
  return 'timed_out'
end

local function due_step(id)
  local j = load_job(id)
  if not j or not j.due then
    redis.call('ZREM', K.due, id)
    return 'dropped'
  end
  if j.due > A.ms then
    redis.call('ZADD', K.due, int_str(j.due), id)
    return 'skipped'
  end
  return promote(j)
end

local function expiry_step(id)
  local j = load_job(id)
  if not j or not is_ended(j) then
    redis.call('ZREM', K.exp, id)
    return 'dropped'
  end
  if expiry_time(j) > A.ms then
    redis.call('ZADD', K.exp, int_str(expiry_time(j)), id)
    return 'skipped'
  end
  remove_job(j, 'expired')
  return 'expired'
end

-- due_ids returns up to limit ids of index whose score is at most now.
local function due_ids(index, limit)
  if limit <= 0 then return {} end
  return redis.call('ZRANGEBYSCORE', index, '-inf', int_str(A.ms), 'LIMIT', '0', int_str(limit))
end

-- sweep_index runs step on up to limit due ids of index and collects the
-- outcomes by name.
local function sweep_index(index, step, limit, out)
  local ids = due_ids(index, limit)
  for _, id in ipairs(ids) do
    local r = step(id)
    out[r] = out[r] or {}
    table.insert(out[r], id)
  end
  return #ids
end

-- promote_due promotes up to limit due jobs of queue q (scheduled jobs and
-- pending retries), so a take sees them without waiting for a sweep.
local function promote_due(q, limit, out)
  local _, _, first = queue_settings(q)
  if first and first > A.ms then return end
  local lo = '[' .. q .. ' '
  local hi = '(' .. q .. ' ' .. lp(A.ms + 1)
  local ms_ = redis.call('ZRANGEBYLEX', K.dq, lo, hi, 'LIMIT', 0, limit)
  for _, m in ipairs(ms_) do
    local id = id_of_member(m)
    local j = load_job(id)
    if j and j.due and j.queue == q then
      local r = promote(j)
      out[r] = out[r] or {}
      table.insert(out[r], id)
    else
      redis.call('ZREM', K.dq, m)
    end
  end
  if #ms_ < limit then
    -- Every due job was promoted: record when the next one falls due.
    local nxt = redis.call('ZRANGEBYLEX', K.dq, lo, '(' .. q .. '!', 'LIMIT', 0, 1)[1]
    redis.call('HSET', K.q, q .. ' d', nxt and string.match(string.sub(nxt, #q + 3), '^(%d+)') or '+inf')
  end
end

-- shard_share is this partition's part of a per-queue limit n split over
-- the queue's shards (settings k = shards, x = this copy's shard index).
local function shard_share(qs, n)
  local k = num(qs.k)
  if k <= 1 then return n end
  local i = num(qs.x)
  local share = math.floor(n / k)
  if i < n % k then share = share + 1 end
  return share
end

-- rate_take returns how many takes queue q's token bucket allows now (at
-- most want) and consumes them.
local function rate_take(q, qs, want)
  local rl = qs.rl
  if not rl then return want end
  local rate = num(rl.r) / math.max(num(qs.k), 1)
  local burst = shard_share(qs, num(rl.b))
  local st = redis.call('HGET', K.rl, q)
  local tokens, last = burst, A.ms
  if st then
    local t, l = string.match(st, '^(%S+) (%S+)$')
    tokens, last = num(t), num(l)
    tokens = math.min(burst, tokens + math.max(A.ms - last, 0) / 1000 * rate)
  end
  local n = math.min(want, math.floor(tokens))
  if n < 0 then n = 0 end
  redis.call('HSET', K.rl, q, string.format('%.6f %d', tokens - n, A.ms))
  return n
end

-- take_from takes up to count jobs from queues (of this partition) in
-- order, for worker, honouring pause, concurrency and rate limits. It
-- returns the taken jobs ({id, queue, attempt, input}), the queues that do
-- not exist here, and what the inline promotion did.
local function take_from(queues, count, worker, swept)
  local taken, missing, spans, settings = {}, {}, {}, {}
  for i, q in ipairs(queues) do
    settings[i] = queue_settings(q) or false
    if not settings[i] then missing[#missing + 1] = q end
  end
  if #missing > 0 then return taken, missing, spans end
  for i, q in ipairs(queues) do
    if #taken >= count then break end
    local qs = settings[i]
    do
      if num(qs.s) > 1 then spans[q] = {num(qs.k), num(qs.s)} end
      promote_due(q, count + 8, swept)
      local room = count - #taken
      if qs.pa then room = 0 end
      if room > 0 and num(qs.c) > 0 then
        local lo, hi = lex_range(q .. ' r')
        room = math.min(room, shard_share(qs, num(qs.c)) - redis.call('ZLEXCOUNT', K.idx, lo, hi))
      end
      if room > 0 and qs.rl then room = rate_take(q, qs, room) end
      if room > 0 then
        local lo, hi = lex_range(q .. ' q')
        for _, m in ipairs(redis.call('ZRANGEBYLEX', K.idx, lo, hi, 'LIMIT', 0, room)) do
          local id = id_of_member(m)
          local j = load_job(id)
          if j and j.status == 'queued' then
            start(j, worker)
            taken[#taken + 1] = {id = id, queue = q, attempt = j.attempt,
              input = j.input or redis.call('HGET', K.inp, id) or nil}
          else
            redis.call('ZREM', K.idx, m)
          end
        end
      end
    end
  end
  return taken, missing, spans
end

-- take_reply encodes a take's reply by hand (it is on every worker's
-- path): the taken jobs with their inputs spliced in as JSON, and t's other
-- fields only when they hold something.
local function take_reply(t, taken)
  drain_notes()
  local parts = {}
  for i, tj in ipairs(taken) do
    parts[i] = '{"id":"' .. tj.id .. '","queue":"' .. tj.queue .. '","attempt":' ..
      int_str(tj.attempt) .. ',"input":' .. (tj.input or 'null') .. '}'
  end
  local out = '{"jobs":[' .. table.concat(parts, ',') .. ']'
  t.woken, t.effects = A.woken, A.effects
  for k, v in pairs(t) do
    if type(v) ~= 'table' or next(v) ~= nil then
      out = out .. ',' .. cjson.encode(k) .. ':' .. cjson.encode(v)
    end
  end
  return out .. '}'
end
