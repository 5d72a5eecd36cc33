-- records.lua: a job's metadata as stored (the record codec), the times
-- and states read from it, and its attempt history.
--
-- Data of a partition (doc.go describes it):
--   j     HASH id -> the job's metadata, a JSON object with short keys (META)
--   inp   HASH id -> input JSON (absent for null); out: id -> output JSON
--   err   HASH id -> the last error {"group","message"}; hist: earlier attempts
--   idx   ZSET, score 0: one member per job, "<queue> <status code> <sort>",
--         so each queue's jobs of one status are a contiguous range in the
--         order they are listed (queued: take order; others: by id); a
--         queued job also has "<queue> Q <lp(id)>" (by_id_member).
--   run   ZSET id -> running deadline (ms); due: id -> due time (ms) of a
--         scheduled job or a pending retry; dq: "<queue> <due><id>" the same
--         jobs by queue, for takes; exp: id -> expiry time (ms) of an ended job
--   tag, trk, fg, wk: lex indexes "<text> <id>" of tags, tracked jobs,
--         failure groups and workers' jobs; fgc: group -> count
--   keys  HASH "p <queue> <key>" / "r <queue> <key>" -> pending / running id
-- Every index entry of a job follows from its metadata alone (attach and
-- detach, indexes.lua), so any script can remove exactly what it added.

-- Status codes of the idx members.
local CODE = {queued = 'q', running = 'r', failed = 'f', completed = 'c', cancelled = 'x',
  timed_out = 't', scheduled = 's', waiting = 'w'}

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
  callback = 'C',
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
  C = 'callback',
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
