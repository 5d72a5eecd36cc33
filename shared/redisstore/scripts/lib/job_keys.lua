-- job_keys.lua: the pending and running slots of a job's key (one pending
-- and one running job per key and queue).

-- key_holder is the id of the job holding slot ('p' pending, 'r' running)
-- of key k in queue q, or nil.
local function key_holder(slot, q, k)
  local id = redis.call('HGET', K.keys, slot .. ' ' .. q .. ' ' .. k)
  if not id then return nil end
  -- A pending job of a deleted queue holds nothing for the queue of its
  -- name that exists now.
  if slot == 'p' then
    local h = load_job(id)
    if h and old_pending(h) then return nil end
  end
  return id
end

-- requeue_refusal is why job j may not become pending again, with the job
-- in the way: another pending job holds its key ('key_pending'), or j is a
-- keyed job an earlier version placed outside its queue's home, where keys
-- live now, and no job of its key runs here, so the home may hold its key
-- ('key_moved').
local function requeue_refusal(j)
  if not j.key then return nil end
  local p = key_holder('p', j.queue, j.key)
  if p and p ~= j.id then return 'key_pending', p end
  local qs = queue_settings(j.queue)
  if not p and qs and num(qs.x) > 0 and not key_holder('r', j.queue, j.key) then return 'key_moved' end
  return nil
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
