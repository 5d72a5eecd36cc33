-- list.lua: one page of a job listing in this partition (GET /jobs,
-- GET /queue/{name}/jobs, GET /failures/{group}), read-only.
--
-- A.sources -> the lex ranges to walk, in order: {index, lo, hi} with index
--              one of idx, tag, trk, wk, fg; or {walk = code}: the idx range
--              of status code in every queue, queue by queue; or
--              {merge = queue}: that queue's jobs by id across every status
--              (its queued jobs' "<queue> Q <id>" members and the other
--              statuses' ranges, all by id), or {merge_all = true}: every
--              queue's so, queue by queue. A merge's members and cursor
--              read "<queue> <lp(id)>".
-- A.after   -> the cursor: {i = source number, m = last member} (absent:
--              from the start)
-- A.limit   -> most jobs to return; A.scan -> most entries to look at
-- A.queue, A.status, A.tag, A.worker, A.tracked -> filters checked on each
--              job (what the sources do not already select)
-- A.parts   -> which of input, output, error to return with each job
-- A.max_bytes -> the page stops before a job that would take it past this
--              many bytes (at least one job)
-- A.must_exist -> a queue: answer queue_not_found unless it exists here
-- A.count_group -> a failure group: reply its count here as total;
--              A.done -> only that (this partition's part of the page is done)
--
-- Pending jobs of deleted queues (generations.lua's drop_of) are skipped.
--
-- Reply {jobs = [{id, sort, meta, input?, output?, error?}], next = cursor
-- after the last entry looked at, or absent when the sources are done}.
-- sort is "<source number> <member>", comparable across partitions.

if A.must_exist and redis.call('HEXISTS', K.q, A.must_exist) == 0 then return fail('queue_not_found') end
-- A failure group's page also counts the group here; a partition whose
-- part of the listing is done answers only that.
local total = A.count_group and num(redis.call('HGET', K.fgc, A.count_group))
if A.done then return cjson.encode({jobs = {}, total = total}) end
local IDX = {idx = K.idx, tag = K.tag, trk = K.trk, wk = K.wk, fg = K.fg}
local limit, scan = num(A.limit), num(A.scan)
local jobs = {}
local i = (A.after and num(A.after.i)) or 1
local after = A.after and A.after.m

local function keep(j)
  if A.queue and j.queue ~= A.queue then return false end
  if A.status and j.status ~= A.status then return false end
  if A.worker and j.worker ~= A.worker then return false end
  if A.tracked ~= nil and (j.tracked and true or false) ~= A.tracked then return false end
  if A.tag then
    local found = false
    for _, t in ipairs(tags_of(j)) do if t == A.tag then found = true end end
    if not found then return false end
  end
  return true
end

-- take lists the job of member m if it passes the filters. It returns 'old'
-- for a pending job of a deleted queue (listed nowhere, see generations.lua's
-- drop_of) or a by-id member, which pages skip past up to SKIP_OLD at a
-- time, and 'full'
-- when the job does not fit in A.max_bytes (counted as its stored parts
-- plus 1024) and the page already holds one.
local SKIP_OLD = 5000
local bytes, max_bytes = 0, num(A.max_bytes)
local function take(m)
  -- A queued job's by-id member, met on a walk of every idx member: the
  -- job is listed at its other member.
  if string.find(m, '^%S+ Q ') then return 'old' end
  local id = id_of_member(m)
  local j = id and load_job(id)
  if j and old_pending(j) then return 'old' end
  if not (j and keep(j)) then return end
  local e = {id = id, sort = i .. ' ' .. m, meta = redis.call('HGET', K.j, id)}
  local size = #e.meta + 1024
  local from = {input = K.inp, output = K.out, error = K.err, history = K.hist, callback = K.cbs}
  for _, part in ipairs(A.parts or {}) do
    local v
    if part == 'dependents' then
      local ds = dependents_of(id)
      if #ds > 0 then v = cjson.encode(ds) end
    else
      v = redis.call('HGET', from[part], id)
    end
    if v then
      e[part] = v
      size = size + #v
    end
  end
  if max_bytes > 0 and #jobs > 0 and bytes + size > max_bytes then return 'full' end
  bytes = bytes + size
  jobs[#jobs + 1] = e
end

-- MERGE_CODES are the idx codes whose members end in the job's lp(id):
-- Q (queued jobs, by id) and every status but queued.
local MERGE_CODES = {'Q', 's', 'w', 'r', 'f', 't', 'c', 'x'}

-- merge_members returns up to n jobs of queue q after id a (an lp(id), nil
-- for the first), by id, as "<q> <lp(id)>": the first n of each range,
-- merged. A page reads at most 8 n members. An id found in two ranges (a
-- stale by-id member next to the job's member of another status, which
-- no script of this version leaves) is listed once.
local function merge_members(q, a, n)
  local all = {}
  for _, code in ipairs(MERGE_CODES) do
    local lo, hi = lex_range(q .. ' ' .. code)
    if a then lo = '(' .. q .. ' ' .. code .. ' ' .. a end
    for _, x in ipairs(redis.call('ZRANGEBYLEX', K.idx, lo, hi, 'LIMIT', 0, n)) do
      all[#all + 1] = q .. ' ' .. string.match(x, '(%S+)$')
    end
  end
  table.sort(all)
  local out = {}
  for _, x in ipairs(all) do
    if #out >= n then break end
    if x ~= out[#out] then out[#out + 1] = x end
  end
  return out
end

-- next_members returns up to n members of source s after member m.
local function next_members(s, m, n)
  if s.merge then
    return merge_members(s.merge, m and string.match(m, '^%S+ (%S+)$'), n)
  end
  if s.merge_all then
    -- Every queue by id, queue by queue (the next queue: the first idx
    -- member past every member of this one).
    local out = {}
    local q, a = nil, nil
    if m then q, a = string.match(m, '^(%S+) (%S+)$') end
    if not q then
      local first = redis.call('ZRANGEBYLEX', K.idx, '-', '+', 'LIMIT', 0, 1)[1]
      q = first and string.match(first, '^(%S+) ')
    end
    while q and #out < n do
      for _, x in ipairs(merge_members(q, a, n - #out)) do out[#out + 1] = x end
      if #out >= n then break end
      local nxt = redis.call('ZRANGEBYLEX', K.idx, '[' .. q .. '!', '+', 'LIMIT', 0, 1)[1]
      q, a = nxt and string.match(nxt, '^(%S+) '), nil
    end
    return out
  end
  if s.walk then
    -- Every queue's range of one status code: from the queue of m (or
    -- the first), to the next queue when one is done.
    local out = {}
    local q = m and string.match(m, '^(%S+) ')
    if not q then
      local first = redis.call('ZRANGEBYLEX', K.idx, '-', '+', 'LIMIT', 0, 1)[1]
      if not first then return out end
      q = string.match(first, '^(%S+) ')
    end
    while q and #out < n do
      local lo, hi = lex_range(q .. ' ' .. s.walk)
      if m and string.sub(m, 1, #q + 1) == q .. ' ' then lo = '(' .. m end
      for _, x in ipairs(redis.call('ZRANGEBYLEX', K.idx, lo, hi, 'LIMIT', 0, n - #out)) do out[#out + 1] = x end
      if #out >= n then break end
      local nxt = redis.call('ZRANGEBYLEX', K.idx, '[' .. q .. '!', '+', 'LIMIT', 0, 1)[1]
      q = nxt and string.match(nxt, '^(%S+) ')
      m = nil
    end
    return out
  end
  local lo = s.lo
  if m then lo = '(' .. m end
  return redis.call('ZRANGEBYLEX', IDX[s.index], lo, s.hi, 'LIMIT', 0, n)
end

local looked, skipped, full = 0, 0, false
while i <= #A.sources and #jobs < limit and looked < scan and not full do
  local n = math.min(scan - looked, limit - #jobs)
  local ms_ = next_members(A.sources[i], after, n)
  for _, m in ipairs(ms_) do
    local r = take(m)
    if r == 'full' then
      full = true
      break
    end
    if r == 'old' and skipped < SKIP_OLD then skipped = skipped + 1 else looked = looked + 1 end
    after = m
  end
  if not full and #ms_ < n then i, after = i + 1, nil end
end
local t = {jobs = jobs, total = total}
if i <= #A.sources then t.next = {i = i, m = after} end
return cjson.encode(t)
