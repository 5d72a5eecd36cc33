-- retry_job.lua: retry a job now (POST /job/{id}/retry), counting against
-- its retries: from running (the attempt ends as failed), failed, timed_out
-- or cancelled. With no retry left the job ends failed.
--
-- A.id, A.run_at (microseconds, optional: the job is scheduled until then).
-- Reply {status, retries_attempted}; errors job_not_found, conflict {status},
-- queue_not_found, key_pending {id}.

local j, why = load_job(A.id)
if not j then return fail(why) end
local st = j.status
if not (st == 'running' or st == 'failed' or st == 'timed_out' or st == 'cancelled') then
  return fail('conflict', {status = st})
end
if not queue_settings(j.queue) then return fail('queue_not_found', {queue = j.queue}) end
local left = num(j.retries_attempted) < num(j.retries)
if left and j.key then
  local p = key_holder('p', j.queue, j.key)
  if p and p ~= j.id then return fail('key_pending', {id = p}) end
end

if not left then
  if st == 'running' then
    fail_job(j, 'failed', {retry = false})
  elseif st ~= 'failed' or j.due then
    detach(j)
    j.status, j.due, j.abandoned = 'failed', nil, true
    if not j.ended_at then j.ended_at = A.now end
    attach(j)
    save_job(j)
    after_end(j, 'failed')
  end
  return reply({status = j.status, retries_attempted = num(j.retries_attempted)})
end

detach(j)
if st == 'running' then
  j.status, j.ended_at = 'failed', A.now
  stat_count(j.queue, 'f')
  stat_time(j.queue, 'r', j.started_at)
  release_key(j)
end
if A.run_at then j.run_at = A.run_at end
requeue(j, true, true)
return reply({status = j.status, retries_attempted = num(j.retries_attempted)})
