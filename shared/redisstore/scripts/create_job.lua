-- create_job.lua: create jobs in one queue of this partition
-- (POST /queue/{name}/job, POST /queue/{name}/jobs, and the creates of the
-- outbox: next, dead letters, schedules).
--
-- A.queue   -> the queue
-- A.specs   -> the jobs, each {input?, tags?, tag_list?, timeout?,
--              heartbeat_timeout?, expires_after?, retries? (decimal strings;
--              absent: the queue's), retry_delays? (JSON text; absent with
--              inherit_delays: the queue's), retry_backoff? (JSON text),
--              timeout_retries?, priority?, run_at? (microseconds), key?,
--              on_conflict? (keep|update|error), update_run_at?,
--              depends_on? (ids; those of this partition are checked here,
--              the others were checked by the caller), tracked? (bool),
--              delays_set? (retry_delays given, maybe empty), callback?
--              (the sealed callback text; absent: the queue's)}
-- A.once    -> an effect id: a create applied from an outbox, answered with
--              the first result when applied again. Its outcome when the
--              queue does not exist here is kept too: queue_not_found in
--              the queue's home (A.home; A.dead_letter counts the dead
--              letter skipped), else moved (the caller goes to the home),
--              so every later application of the effect goes the same way.
-- A.span    -> (a keyed create in the queue's home) how many of the queue's
--              partitions the caller looked for its keys in (enough when
--              the settings have kh: no key was ever placed elsewhere)
-- A.elsewhere -> the specs' keys are held here although this is not the
--              queue's home (jobs of earlier versions): create only while
--              each key still has a pending or running job here
--
-- Reply {ids = [...], existing = [bool...]} in spec order, shards = {k, s},
-- kh (the queue's keys are all at its home), pd (the queue delivers by
-- push and a job of the batch is queued now: its dispatcher may be woken);
-- errors:
-- queue_not_found; key_exists {key, id} (on_conflict error: nothing
-- created); dep_missing {id}; invalid {field, reason} (an update's
-- depends_on that would make a cycle); ids_exhausted; stale_span {shards}
-- (the queue spans more than A.span partitions); key_moved {key}
-- (A.elsewhere and a key has no job here any more); fenced (A.fence: see
-- deps.go). A batch is checked whole before anything is written.

if A.once then
  local done = redis.call('HGET', K.ap, A.once)
  if done then return done end
end
local q = A.queue
local qs, waiting = queue_settings(q)
if not qs then
  if not A.once then return fail('queue_not_found') end
  local out = fail(A.home and 'queue_not_found' or 'moved')
  if A.home and A.dead_letter then total('dead_letters_skipped') end
  redis.call('HSET', K.ap, A.once, out)
  redis.call('ZADD', K.apt, A.ms, A.once)
  return out
end
local specs = A.specs
if A.span and num(qs.s) > num(A.span) and not qs.kh then
  return fail('stale_span', {shards = {num(qs.k), num(qs.s)}})
end
if A.fence then
  -- An on_conflict update that changes a pending job's dependencies runs
  -- under the fence of deps.go, as a PATCH of depends_on does: refused
  -- once a change with a larger fence number has read or written here.
  local f = num(redis.call('GET', K.dfn))
  if f > A.fence then return fail('fenced') end
  if f < A.fence then redis.call('SET', K.dfn, A.fence) end
end

-- cycle says why the pending job id cannot wait on deps (nil when it can):
-- it is one of them, or one of them waits on it. The walk follows the
-- dependents recorded in this partition (the caller checked the others
-- before the call), at most 10,000 jobs.
local function cycle(id, deps)
  local want = {}
  for _, d in ipairs(deps) do
    d = tostring(d)
    if d == id then return 'a job cannot depend on itself' end
    want[d] = true
  end
  local seen, frontier, n = {[id] = true}, {id}, 0
  while #frontier > 0 do
    local next = {}
    for _, f in ipairs(frontier) do
      for _, d in ipairs(decode(redis.call('HGET', K.deps, f)) or {}) do
        d = tostring(d)
        if want[d] then return 'job ' .. d .. ' depends on job ' .. id end
        if not seen[d] and partition_of(d) == A.p then
          seen[d], n = true, n + 1
          if n > 10000 then return 'too many dependents to check for a cycle' end
          next[#next + 1] = d
        end
      end
    end
    frontier = next
  end
  return nil
end

-- Check everything before writing anything.
local seen = {}
for _, s in ipairs(specs) do
  if s.key then
    if A.elsewhere and not (key_holder('p', q, s.key) or key_holder('r', q, s.key)) then
      return fail('key_moved', {key = s.key})
    end
    if s.on_conflict == 'error' and (seen[s.key] or key_holder('p', q, s.key)) then
      return fail('key_exists', {key = s.key, id = seen[s.key] or key_holder('p', q, s.key)})
    end
    seen[s.key] = seen[s.key] or true
  end
  for _, d in ipairs(s.depends_on or {}) do
    if partition_of(d) == A.p and not load_job(tostring(d)) then return fail('dep_missing', {id = tostring(d)}) end
  end
  local holder = s.key and s.on_conflict == 'update' and s.depends_on and key_holder('p', q, s.key)
  if holder then
    local why = cycle(holder, s.depends_on)
    if why then return fail('invalid', {field = 'depends_on', reason = why}) end
  end
end

-- update_pending applies a create with on_conflict update to the pending
-- job x that holds the key: every field the create gives replaces the
-- job's, the others stay as they were (run_at follows update_run_at).
local function update_pending(x, s)
  detach(x)
  if s.input then
    x.input = #s.input <= 256 and s.input or nil
    if x.input then redis.call('HDEL', K.inp, x.id) else redis.call('HSET', K.inp, x.id, s.input) end
  end
  if s.tags or s.tracked ~= nil then
    untag_all(x)
    if s.tags then x.tags = s.tags end
    if s.tracked ~= nil then x.tracked = s.tracked or nil end
    for _, t in ipairs(s.tag_list or tags_of(x)) do redis.call('ZADD', K.tag, 0, tag_member(t, x.id)) end
    if x.tracked then redis.call('ZADD', K.trk, 0, x.queue .. ' ' .. lp(x.id)) end
  end
  for _, f in ipairs({'priority', 'retries', 'timeout', 'heartbeat_timeout', 'expires_after', 'timeout_retries'}) do
    if s[f] then x[f] = s[f] end
  end
  if s.delays_set or s.retry_delays or s.retry_backoff then
    x.retry_delays, x.retry_backoff = s.retry_delays, s.retry_backoff
  end
  local rule = s.update_run_at or 'always'
  if s.run_at or rule == 'always' then
    local old, new = x.run_at and num(x.run_at) or 0, s.run_at and num(s.run_at) or 0
    if rule == 'always' or (rule == 'if_later' and new > old) or (rule == 'if_earlier' and new < old) then
      x.run_at = s.run_at
    end
  end
  if s.depends_on then
    if #s.depends_on == 0 then x.depends_on, x.waiting_on = nil, nil else depend(x, s.depends_on) end
  end
  -- A queued job that stays runnable keeps its place in the queue.
  if not (x.status == 'queued' and not (x.run_at and ms(x.run_at) > A.ms) and not x.waiting_on and not x.blocked) then
    make_runnable(x)
  end
  settle(x)
end

-- Reserve the batch's sequence numbers; ids stay below 2^53: refuse the
-- batch if its last id would not.
local last = redis.call('HINCRBY', K.ctr, 'id', #specs)
if last * A.P + A.p >= 9007199254740992 then
  redis.call('HINCRBY', K.ctr, 'id', -#specs)
  return fail('ids_exhausted')
end
local seq = last - #specs

local ids, existing, due = {}, {}, false
for i, s in ipairs(specs) do
  local holder = s.key and key_holder('p', q, s.key)
  if holder then
    local x = load_job(holder)
    if x and s.on_conflict == 'update' then
      update_pending(x, s)
      if x.status == 'queued' then due = true end
    end
    ids[i], existing[i] = holder, true
  else
    seq = seq + 1
    local id = int_str(seq * A.P + A.p)
    local j = {id = id, queue = q, gen = qs.g, created_at = A.now,
      timeout = s.timeout or qs.t, heartbeat_timeout = s.heartbeat_timeout or qs.h,
      expires_after = s.expires_after or qs.e, retries = s.retries or qs.r,
      retry_delays = s.retry_delays, retry_backoff = s.retry_backoff,
      input = s.input and #s.input <= 256 and s.input or nil,
      timeout_retries = s.timeout_retries or qs.tr, tags = s.tags, priority = s.priority,
      run_at = s.run_at, key = s.key, tracked = s.tracked, callback = s.callback or qs.cb}
    if s.inherit_delays then j.retry_delays = qs.d end
    if s.inherit_backoff then j.retry_backoff = qs.bo end
    if s.key and key_holder('r', q, s.key) then j.blocked = 1 end
    if s.depends_on and #s.depends_on > 0 then depend(j, s.depends_on) end
    make_runnable(j, seq)
    attach(j)
    save_job(j)
    if s.input and #s.input > 256 then redis.call('HSET', K.inp, id, s.input) end
    for _, t in ipairs(s.tag_list or {}) do redis.call('ZADD', K.tag, 0, tag_member(t, id)) end
    if s.tracked then redis.call('ZADD', K.trk, 0, q .. ' ' .. lp(id)) end
    stat_created(q)
    if j.status == 'queued' then
      wake(q, waiting)
      due = true
    end
    ids[i], existing[i] = id, false
  end
end
-- Jobs a key turned into existing ones used no number: give back the
-- numbers left at the end of the reservation, so ids stay consecutive.
if seq < last then redis.call('HINCRBY', K.ctr, 'id', seq - last) end
local out = reply({ids = ids, existing = existing, shards = {num(qs.k), num(qs.s)}, kh = qs.kh,
  pd = (qs.pu and due) or nil})
if A.once then
  redis.call('HSET', K.ap, A.once, out)
  redis.call('ZADD', K.apt, A.ms, A.once)
end
return out
