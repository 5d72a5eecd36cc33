-- runnable.lua: where a job goes when it may run again (queued, scheduled
-- or waiting), and when a failed job is retried.

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
