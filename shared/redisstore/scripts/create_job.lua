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
--              the others were checked by the caller), tracked?}
-- A.once    -> an effect id: a create applied from an outbox, answered with
--              the first result when applied again
--
-- Reply {ids = [...], existing = [bool...]} in spec order; errors:
-- queue_not_found; key_exists {key, id} (on_conflict error: nothing
-- created); dep_missing {id}; ids_exhausted. A batch is checked whole
-- before anything is written.

if A.once then
  local done = redis.call('HGET', K.ap, A.once)
  if done then return done end
end
local q = A.queue
local qs, waiting = queue_settings(q)
if not qs then return fail('queue_not_found') end
local specs = A.specs

-- Check everything before writing anything.
local seen = {}
for _, s in ipairs(specs) do
  if s.key then
    if s.on_conflict == 'error' and (seen[s.key] or key_holder('p', q, s.key)) then
      return fail('key_exists', {key = s.key, id = seen[s.key] or key_holder('p', q, s.key)})
    end
    seen[s.key] = seen[s.key] or true
  end
  for _, d in ipairs(s.depends_on or {}) do
    if partition_of(d) == A.p and not load_job(tostring(d)) then return fail('dep_missing', {id = tostring(d)}) end
  end
end

-- update_pending applies a create with on_conflict update to the pending
-- job x that holds the key.
local function update_pending(x, s)
  detach(x)
  x.input = s.input and #s.input <= 256 and s.input or nil
  if s.input and not x.input then redis.call('HSET', K.inp, x.id, s.input) else redis.call('HDEL', K.inp, x.id) end
  if s.priority then x.priority = s.priority end
  if s.retries then x.retries = s.retries end
  if s.timeout then x.timeout = s.timeout end
  if s.heartbeat_timeout then x.heartbeat_timeout = s.heartbeat_timeout end
  if s.expires_after then x.expires_after = s.expires_after end
  local rule = s.update_run_at or 'always'
  if s.run_at or rule == 'always' then
    local old, new = x.run_at and num(x.run_at) or 0, s.run_at and num(s.run_at) or 0
    if rule == 'always' or (rule == 'if_later' and new > old) or (rule == 'if_earlier' and new < old) then
      x.run_at = s.run_at
    end
  end
  if x.status == 'scheduled' or (x.status == 'queued' and x.run_at and ms(x.run_at) > A.ms) then
    make_runnable(x)
  end
  attach(x)
  save_job(x)
end

-- Reserve the batch's sequence numbers; ids stay below 2^53: refuse the
-- batch if its last id would not.
local last = redis.call('HINCRBY', K.ctr, 'id', #specs)
if last * A.P + A.p >= 9007199254740992 then
  redis.call('HINCRBY', K.ctr, 'id', -#specs)
  return fail('ids_exhausted')
end
local seq = last - #specs

local ids, existing = {}, {}
for i, s in ipairs(specs) do
  local holder = s.key and key_holder('p', q, s.key)
  if holder then
    local x = load_job(holder)
    if x and s.on_conflict == 'update' then update_pending(x, s) end
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
      run_at = s.run_at, key = s.key, tracked = s.tracked}
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
    total('created')
    stat_count(q, 'c')
    if j.status == 'queued' then wake(q, waiting) end
    ids[i], existing[i] = id, false
  end
end
-- Jobs a key turned into existing ones used no number: give back the
-- numbers left at the end of the reservation, so ids stay consecutive.
if seq < last then redis.call('HINCRBY', K.ctr, 'id', seq - last) end
local out = reply({ids = ids, existing = existing, shards = {num(qs.k), num(qs.s)}})
if A.once then
  redis.call('HSET', K.ap, A.once, out)
  redis.call('ZADD', K.apt, A.ms, A.once)
end
return out
