-- update_job.lua: change a job (PATCH /job/{id}), and optionally take the
-- next job of a queue of this partition (PATCH /job/{id}?take=).
--
-- A.id        -> the job
-- A.attempt   -> fencing: the change applies only if this is the job's
--                current attempt (absent: any)
-- A.output    -> new output as JSON text (absent: unchanged)
-- A.status    -> target status (absent: none); A.allowed -> the statuses it
--                may be reached from (ocypod.AllowedFrom, so the table lives
--                in Go only)
-- A.error     -> {group, message} with failed / timed_out
-- A.retry     -> false: permanent failure; A.retry_at -> this retry's due (ms)
-- A.next      -> with completed: {queue, spec, part (the partition the job
--                goes to)}, created through the outbox
-- A.priority, A.run_at (microseconds, '' to clear), A.depends_on (ids,
--                checked by the caller, with A.fence: see deps.go), A.tags (JSON text, '' for none) with
--                A.tag_list, A.tracked -> in-place changes
-- A.take      -> {queues, count, worker, max_bytes}: take afterwards (see
--                take.lua)
--
-- Reply {status = new status} (+ take.lua's fields with A.take); errors:
-- job_not_found, stale_attempt {attempt}, not_running (output of a job that
-- is not running), conflict {status} (transition not allowed), not_pending
-- {status} (in-place change of a job that is not pending), queue_not_found
-- (requeue into a deleted queue, also when one of its name was created
-- since), push_queue {queue} (a take queue whose jobs are delivered by
-- push), key_pending {id}, key_moved, fenced. Nothing is written unless
-- every check passes.

local j, why = load_job(A.id)
if not j then return fail(why) end
if A.take then
  for _, q in ipairs(A.take.queues) do
    local qs = queue_settings(q)
    if not qs then return fail('queue_not_found', {queue = q}) end
    if qs.pu then return fail('push_queue', {queue = q}) end
  end
end
if A.attempt and num(A.attempt) ~= num(j.attempt) then
  return fail('stale_attempt', {attempt = num(j.attempt)})
end
if A.output and j.status ~= 'running' then return fail('not_running') end
local target = A.status
if target then
  local allowed = false
  for _, st in ipairs(A.allowed) do
    if st == j.status then allowed = true end
  end
  if not allowed then return fail('conflict', {status = j.status}) end
  if target == 'queued' then
    -- A job never goes back into a queue created after its own was deleted.
    local qs = queue_settings(j.queue)
    if not qs or old_generation(j, qs) then return fail('queue_not_found', {queue = j.queue}) end
    local why, p = requeue_refusal(j)
    if why then return fail(why, {id = p}) end
  end
end
local in_place = A.priority or A.run_at or A.depends_on
if in_place and not (j.status == 'queued' or j.status == 'scheduled' or j.status == 'waiting') then
  return fail('not_pending', {status = j.status})
end
if A.fence then
  -- A change of dependencies under the fence of deps.go: refused once a
  -- change with a larger fence number has read or written this partition.
  local f = num(redis.call('GET', K.dfn))
  if f > A.fence then return fail('fenced') end
  if f < A.fence then redis.call('SET', K.dfn, A.fence) end
end

if A.output then redis.call('HSET', K.out, j.id, A.output) end

if A.tags or A.tracked ~= nil then
  untag_all(j)
  if A.tags then
    if A.tags == '' then j.tags = nil else j.tags = A.tags end
  end
  if A.tracked ~= nil then j.tracked = A.tracked or nil end
  for _, t in ipairs(tags_of(j)) do redis.call('ZADD', K.tag, 0, tag_member(t, j.id)) end
  if j.tracked then redis.call('ZADD', K.trk, 0, j.queue .. ' ' .. lp(j.id)) end
  if not (in_place or target) then save_job(j) end
end

if in_place then
  detach(j)
  if A.priority then j.priority = A.priority end
  if A.run_at then
    if A.run_at == '' then j.run_at = nil else j.run_at = A.run_at end
  end
  if A.depends_on then
    if #A.depends_on == 0 then
      j.depends_on, j.waiting_on = nil, nil
    else
      depend(j, A.depends_on)
    end
  end
  local keep_order = j.status == 'queued' and not A.priority
  if keep_order then
    -- Only run_at or dependencies changed and the job stays queued: keep
    -- its place.
    if (j.run_at and ms(j.run_at) > A.ms) or j.waiting_on then make_runnable(j) end
  else
    make_runnable(j)
  end
  settle(j)
end

if target == 'completed' or target == 'cancelled' then
  finish(j, target, A.error)
  if A.next and target == 'completed' then
    effect({op = 'create', queue = A.next.queue, spec = A.next.spec, from = j.id, part = A.next.part})
  end
elseif target == 'failed' or target == 'timed_out' then
  fail_job(j, target, {error = A.error, retry = A.retry, retry_at = A.retry_at})
elseif target == 'queued' then
  requeue(j, false)
end

local t = {status = j.status}
if A.take then
  local swept = {}
  local taken, missing, spans = take_from(A.take.queues, num(A.take.count), A.take.worker, swept,
    A.take.max_bytes and {left = num(A.take.max_bytes)})
  t.missing, t.swept, t.spans = missing, swept, spans
  return take_reply(t, taken)
end
return reply(t)
