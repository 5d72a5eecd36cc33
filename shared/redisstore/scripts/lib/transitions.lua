-- transitions.lua: a job's changes of status that end an attempt or the
-- job (finish, fail_job, requeue, remove_job, promote), with what follows.

-- note_callback records that job j's callback is due, when it ended for
-- good (why) with a status its callback names: cbq (id by due time) and
-- cbs (id -> {e = ended ms, a = tries, d = delivered ms}) hold it until
-- the dispatcher has sent it (callbacks.lua, callback_done.lua). A new
-- ending starts a new callback.
local function note_callback(j, why)
  if not j.callback then return end
  local cb = decode(j.callback)
  for _, st in ipairs(cb and cb.on or {}) do
    if st == why then
      redis.call('ZADD', K.cbq, A.ms, j.id)
      redis.call('HSET', K.cbs, j.id, cjson.encode({e = A.ms, a = 0}))
      return
    end
  end
end

-- after_end runs the consequences of job j ending for good (completed,
-- cancelled, failed or timed out with no retry, deleted): its dependents
-- learn the outcome, and a job failed for good is copied to its queue's
-- dead letter queue. why is the end ('completed', 'cancelled', 'deleted'...).
local function after_end(j, why)
  -- A GET /job/{id}?wait= (get_job.lua's A.watch) marked the job's queue:
  -- name the job in the reply ('#<id>'), so the store wakes its waiters.
  local wf = j.queue .. ' j'
  local wu = redis.call('HGET', K.q, wf)
  if wu then
    if num(wu) > A.ms then wake('#' .. j.id, true) else redis.call('HDEL', K.q, wf) end
  end
  if j.has_dependents then
    release_dependents(j.id, why)
    j.has_dependents = nil
  end
  note_callback(j, why)
  if (why == 'failed' or why == 'timed_out') then
    local qs = queue_settings(j.queue)
    if qs and qs.dl and qs.dl ~= '' and not old_generation(j, qs) then
      local function get(k) return redis.call('HGET', k, j.id) or nil end
      effect({op = 'dlq', queue = qs.dl, job = j.id, meta = get(K.j), input = get(K.inp) or j.input,
        output = get(K.out), error = get(K.err)})
    end
  end
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
  if st == 'completed' then
    stat_end(j.queue, 'd', was == 'running', j.started_at)
  elseif was == 'running' then
    stat_end(j.queue, 'x', true, j.started_at)
  else
    total(st)
  end
  if was == 'running' then
    release_key(j)
    freed(j)
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
  stat_end(j.queue, st == 'timed_out' and 't' or 'f', true, j.started_at)
  release_key(j)
  freed(j)
  if not j.due then after_end(j, st) end
end

-- requeue puts j back in its queue (PATCH queued, an automatic or explicit
-- retry): its ended attempt goes to the history, its run fields and output
-- are cleared. auto counts a retry against the job's budget. Returns an
-- error code when its key's pending slot is taken by another job.
local function requeue(j, auto, detached)
  local why, p = requeue_refusal(j)
  if why then return why, p end
  if j.status == 'running' then freed(j) end
  push_history(j)
  if not detached then detach(j) end
  if auto then
    if j.status == 'timed_out' and j.timeout_retries then j.timeouts_retried = num(j.timeouts_retried) + 1 end
    j.retries_attempted = num(j.retries_attempted) + 1
  end
  j.started_at, j.ended_at, j.last_heartbeat, j.abandoned, j.group = nil, nil, nil, nil, nil
  redis.call('HDEL', K.out, j.id)
  if j.key and key_holder('r', j.queue, j.key) then j.blocked = 1 end
  local qs, waiting = queue_settings(j.queue)
  if qs then j.gen = qs.g end
  make_runnable(j)
  attach(j)
  save_job(j)
  if auto then stat_retried(j.queue) else total('retried') end
  if j.status == 'queued' then wake(j.queue, waiting) end
  return nil
end

-- remove_job deletes a job and every trace of it (DELETE /job, expiry, a
-- deleted queue's pending jobs).
local function remove_job(j, why)
  detach(j)
  untag_all(j)
  if j.status == 'running' then release_key(j); freed(j) end
  redis.call('HDEL', K.j, j.id)
  redis.call('HDEL', K.inp, j.id)
  redis.call('HDEL', K.out, j.id)
  redis.call('HDEL', K.err, j.id)
  redis.call('HDEL', K.hist, j.id)
  if j.callback then
    redis.call('ZREM', K.cbq, j.id)
    redis.call('HDEL', K.cbs, j.id)
  end
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
    if old_pending(j) then
      remove_job(j, 'deleted')
      return 'dropped'
    end
    detach(j)
    make_runnable(j)
    settle(j)
    return 'promoted'
  end
  -- A retry never goes into a queue created after its own was deleted.
  local qs = queue_settings(j.queue)
  if not qs or old_generation(j, qs) then
    abandon(j)
    return 'abandoned'
  end
  if requeue(j, true) then
    abandon(j)
    return 'abandoned'
  end
  return 'retried'
end
