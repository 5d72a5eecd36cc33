-- sweeps.lua: the steps of the sweeps (timeouts, due jobs, expiry) and the
-- promotion of due jobs a take does on its way.

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
