-- retry_job.lua: retry a job now (POST /job/{id}/retry), counting against
-- its retries: from running (the attempt ends as failed), failed, timed_out
-- or cancelled. With no retry left the job ends failed.
--
-- A.id, A.run_at (microseconds, optional: the job is scheduled until then).
-- Reply {status, retries_attempted, pd, queue} (pd: the queue delivers by
-- push and the job is queued now, queue its name); errors job_not_found, conflict {status},
-- queue_not_found, key_pending {id}, key_moved.

local j, why = load_job(A.id)
if not j then return fail(why) end
local st = j.status
if not (st == 'running' or st == 'failed' or st == 'timed_out' or st == 'cancelled') then
  return fail('conflict', {status = st})
end
local qs = queue_settings(j.queue)
if not qs or old_generation(j, qs) then return fail('queue_not_found', {queue = j.queue}) end
local left = num(j.retries_attempted) < num(j.retries)
if left then
  local why, p = requeue_refusal(j)
  if why then return fail(why, {id = p}) end
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
  stat_end(j.queue, 'F', true, j.started_at)
  release_key(j)
end
if A.run_at then j.run_at = A.run_at end
requeue(j, true, true)
local pd = (qs.pu and j.status == 'queued') or nil
return reply({status = j.status, retries_attempted = num(j.retries_attempted), pd = pd, queue = pd and j.queue})
