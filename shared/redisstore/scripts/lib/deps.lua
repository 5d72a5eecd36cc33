-- deps.lua: dependencies recorded (depend) and their dependents released
-- when they end.

-- Work that follows a job's end: its dependents are told (here when they
-- live in this partition, else through the outbox), in a loop rather than by
-- recursion, since a cancellation can cascade down a chain of dependents.
local NOTES = {}

-- A dependency's dependents are members "<lp(dep)> <lp(id)>" of the lex
-- index dpt: adding one is O(log n) whatever their number. Data written
-- before kept them as a JSON list in the hash deps (id -> ids); those are
-- still read (dependents_of) and dropped when the dependency ends.

-- add_dependent records job id (of any partition) as waiting on dj, a job
-- of this partition.
local function add_dependent(dj, id)
  redis.call('ZADD', K.dpt, 0, lp(dj.id) .. ' ' .. lp(id))
  if not dj.has_dependents then
    dj.has_dependents = 1
    save_job(dj)
  end
end

-- dependents_of lists the ids waiting on job id, each once: the legacy
-- list first, then the index in id order.
local function dependents_of(id)
  local out, seen = {}, {}
  local function add(d)
    d = tostring(d)
    if not seen[d] then
      seen[d] = true
      out[#out + 1] = d
    end
  end
  for _, d in ipairs(decode(redis.call('HGET', K.deps, id)) or {}) do add(d) end
  local lo, hi = lex_range(lp(id))
  for _, m in ipairs(redis.call('ZRANGEBYLEX', K.dpt, lo, hi)) do add(id_of_member(m)) end
  return out
end

-- depend makes job j wait on the jobs deps (ids): each dependency of this
-- partition that is not completed is recorded as having j for dependent
-- (once), or, when it already ended otherwise or is gone, queues the note
-- that cancels j; those of other partitions learn it through the outbox.
-- Sets j.depends_on and j.waiting_on (nil when nothing is left to wait for).
local function depend(j, deps)
  j.depends_on = cjson.encode(deps)
  local left = {}
  for _, d in ipairs(deps) do
    d = tostring(d)
    if partition_of(d) == A.p then
      local dj = load_job(d)
      if not dj then
        left[#left + 1] = d
        NOTES[#NOTES + 1] = {job = j.id, dep = d, why = 'deleted'}
      elseif dj.status ~= 'completed' then
        left[#left + 1] = d
        if is_ended(dj) then
          NOTES[#NOTES + 1] = {job = j.id, dep = d, why = dj.status}
        else
          add_dependent(dj, j.id)
        end
      end
    else
      left[#left + 1] = d
      effect({op = 'depend', to = partition_of(d), job = j.id, dep = d})
    end
  end
  if #left > 0 then j.waiting_on = cjson.encode(left) else j.waiting_on = nil end
end

-- RELEASE_BATCH bounds the dependents one call releases (cascades
-- included), so that ending a job with many costs each call the same.
local RELEASE_BATCH = 100

-- release_dependents tells the dependents of job id (here or elsewhere)
-- that it ended (why), as notes drained at the reply: up to what is left
-- of this call's RELEASE_BATCH (A.released counts them); the rest through
-- a 'release' effect on this partition (apply.lua), which goes on the same
-- way. The legacy list goes at once.
local function release_dependents(id, why)
  for _, d in ipairs(decode(redis.call('HGET', K.deps, id)) or {}) do
    NOTES[#NOTES + 1] = {job = tostring(d), dep = id, why = why}
  end
  redis.call('HDEL', K.deps, id)
  local lo, hi = lex_range(lp(id))
  local left = RELEASE_BATCH - num(A.released)
  local ms = {}
  if left > 0 then ms = redis.call('ZRANGEBYLEX', K.dpt, lo, hi, 'LIMIT', 0, left) end
  for _, m in ipairs(ms) do NOTES[#NOTES + 1] = {job = id_of_member(m), dep = id, why = why} end
  if #ms > 0 then redis.call('ZREMRANGEBYLEX', K.dpt, lo, '[' .. ms[#ms]) end
  A.released = num(A.released) + #ms
  if #ms == math.max(left, 0) and redis.call('ZRANGEBYLEX', K.dpt, lo, hi, 'LIMIT', 0, 1)[1] then
    effect({op = 'release', to = A.p, dep = id, why = why})
  end
end
