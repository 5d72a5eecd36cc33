-- list.lua: one page of a job listing in this partition (GET /jobs,
-- GET /queue/{name}/jobs, GET /failures/{group}), read-only.
--
-- A.sources -> the lex ranges to walk, in order: {index, lo, hi} with index
--              one of idx, tag, trk, wk, fg; or {walk = code}: the idx range
--              of status code in every queue, queue by queue
-- A.after   -> the cursor: {i = source number, m = last member} (absent:
--              from the start)
-- A.limit   -> most jobs to return; A.scan -> most entries to look at
-- A.queue, A.status, A.tag, A.worker, A.tracked -> filters checked on each
--              job (what the sources do not already select)
-- A.parts   -> which of input, output, error to return with each job
-- A.must_exist -> a queue: answer queue_not_found unless it exists here
-- A.count_group -> a failure group: reply its count here as total;
--              A.done -> only that (this partition's part of the page is done)
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

local function take(m)
  local id = id_of_member(m)
  local j = id and load_job(id)
  if not (j and keep(j)) then return end
  local e = {id = id, sort = i .. ' ' .. m, meta = redis.call('HGET', K.j, id)}
  local from = {input = K.inp, output = K.out, error = K.err, history = K.hist, dependents = K.deps}
  for _, part in ipairs(A.parts or {}) do
    local v = redis.call('HGET', from[part], id)
    if v then e[part] = v end
  end
  jobs[#jobs + 1] = e
end

-- next_members returns up to n members of source s after member m.
local function next_members(s, m, n)
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

local looked = 0
while i <= #A.sources and #jobs < limit and looked < scan do
  local n = math.min(scan - looked, limit - #jobs)
  local ms_ = next_members(A.sources[i], after, n)
  for _, m in ipairs(ms_) do
    take(m)
    after = m
    looked = looked + 1
  end
  if #ms_ < n then i, after = i + 1, nil end
end
local t = {jobs = jobs, total = total}
if i <= #A.sources then t.next = {i = i, m = after} end
return cjson.encode(t)
