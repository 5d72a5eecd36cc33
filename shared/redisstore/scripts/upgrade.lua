-- upgrade.lua: convert a namespace written by version 1 of the store (one
-- hash per job under "{ns}:job:<id>", per-queue index sets) into this
-- layout, a batch at a time (see upgrade.go). The version-1 keys a call
-- reads are declared after the others (KW), in the order A lists them.
--
-- A.op = 'queue' KW = {v1 queue hash}; A.name -> the queue's settings, if
--                it is not here yet and version 1 had it (not deleted).
-- A.op = 'jobs'  KW = {v1 job hash of each of A.ids..., v1 failed set};
--                A.seq[id] -> the pending order of queued jobs. Each job is
--                written here with every index entry, then its version-1
--                hash is deleted; ids whose hash is gone are skipped, so a
--                batch can run again.
-- A.op = 'finish' KW = {v1 stats hash, v1 job id counter}: totals and the id
--                counter move here, and the layout is marked version 2.
-- A.op = 'by_id' (version 2 to 3, one call per partition): gives up to
--                A.limit queued jobs of this partition their by-id idx
--                member ("<queue> Q <lp(id)>", indexes.lua's
--                by_id_member), queue by queue from where the last call
--                stopped (K.ctr's "v3m", the last member done; "v3d" once
--                every queued job here has one). Adding a member twice
--                changes nothing, so a call can run again.
-- Reply {done = jobs converted (or members added), more (by_id: this
-- partition has more to do)}.

local n = 0
local more = false
if A.op == 'queue' then
  local h = redis.call('HGETALL', KW[1])
  -- A name without settings is a deleted queue that still has jobs: they
  -- are converted, the queue stays deleted.
  if #h > 0 and redis.call('HEXISTS', K.q, A.name) == 0 then
    local s = {g = redis.call('HINCRBY', K.ctr, 'gen', 1), o = 0, k = 1, s = 1}
    local names = {timeout = 't', heartbeat_timeout = 'h', expires_after = 'e', retries = 'r', retry_delays = 'd'}
    for i = 1, #h, 2 do
      if names[h[i]] then s[names[h[i]]] = h[i + 1] end
    end
    redis.call('HSET', K.q, A.name, cjson.encode(s))
    n = 1
  end
elseif A.op == 'jobs' then
  local failed = KW[#KW]
  for i, id in ipairs(A.ids) do
    local h = redis.call('HGETALL', KW[i])
    if #h > 0 then
      local v = {}
      for x = 1, #h, 2 do v[h[x]] = h[x + 1] end
      local j = {id = id, queue = v.queue, status = v.status, created_at = v.created_at,
        started_at = v.started_at, ended_at = v.ended_at, last_heartbeat = v.last_heartbeat,
        timeout = v.timeout, heartbeat_timeout = v.heartbeat_timeout, expires_after = v.expires_after,
        retries = v.retries, retries_attempted = v.retries_attempted, retry_delays = v.retry_delays,
        tags = v.tags, abandoned = v.abandoned == '1',
        input = v.input and #v.input <= 256 and v.input or nil}
      if j.queue and CODE[j.status or ''] then
        if j.status == 'queued' then
          j.sc, j.sr = 0, num(A.seq[id])
        elseif j.status == 'failed' or j.status == 'timed_out' then
          local due = redis.call('ZSCORE', failed, id)
          if due then j.due = num(due) end
        end
        attach(j)
        save_job(j)
        if v.input and #v.input > 256 then redis.call('HSET', K.inp, id, v.input) end
        if v.output then redis.call('HSET', K.out, id, v.output) end
        for _, t in ipairs(tags_of(j)) do
          if type(t) == 'string' then redis.call('ZADD', K.tag, 0, tag_member(t, id)) end
        end
        n = n + 1
      end
      redis.call('DEL', KW[i])
      redis.call('ZREM', failed, id)
    end
  end
elseif A.op == 'finish' then
  local h = redis.call('HGETALL', KW[1])
  for i = 1, #h, 2 do redis.call('HINCRBY', K.tot, h[i], num(h[i + 1])) end
  local last = num(redis.call('GET', KW[2]))
  if last > num(redis.call('HGET', K.ctr, 'id')) then redis.call('HSET', K.ctr, 'id', int_str(last)) end
  redis.call('DEL', KW[1], KW[2])
  redis.call('HSET', K.meta, 'version', '2', 'partitions', '1')
elseif A.op == 'by_id' and redis.call('HEXISTS', K.ctr, 'v3d') == 0 then
  local limit = num(A.limit)
  local m = redis.call('HGET', K.ctr, 'v3m')
  local q = m and string.match(m, '^(%S+) ')
  if not q then
    local first = redis.call('ZRANGEBYLEX', K.idx, '-', '+', 'LIMIT', 0, 1)[1]
    q = first and string.match(first, '^(%S+) ')
  end
  while q and n < limit do
    local lo, hi = lex_range(q .. ' q')
    if m and string.sub(m, 1, #q + 3) == q .. ' q ' then lo = '(' .. m end
    local ms_ = redis.call('ZRANGEBYLEX', K.idx, lo, hi, 'LIMIT', 0, limit - n)
    for _, x in ipairs(ms_) do
      redis.call('ZADD', K.idx, 0, q .. ' Q ' .. lp(id_of_member(x)))
      m = x
    end
    n = n + #ms_
    if n >= limit then break end
    -- The next queue: the first idx member past every member of this one.
    local nxt = redis.call('ZRANGEBYLEX', K.idx, '[' .. q .. '!', '+', 'LIMIT', 0, 1)[1]
    q = nxt and string.match(nxt, '^(%S+) ')
    m = q and (q .. ' ')
  end
  if q then
    redis.call('HSET', K.ctr, 'v3m', m or (q .. ' '))
    more = true
  else
    redis.call('HSET', K.ctr, 'v3d', 1)
    redis.call('HDEL', K.ctr, 'v3m')
  end
end
return cjson.encode({done = n, more = more})
