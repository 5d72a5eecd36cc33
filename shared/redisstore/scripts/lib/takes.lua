-- takes.lua: taking jobs (start, take_from, take_reply) and the workers'
-- registry.

-- trim_workers forgets up to n workers of this partition's registry last
-- seen more than A.worker_ttl ms ago (Options.WorkerExpiry: no listing
-- shows them any more), so the registry does not grow without end. Without
-- A.worker_ttl it does nothing.
local function trim_workers(n)
  if not A.worker_ttl then return 0 end
  local old = redis.call('ZRANGEBYSCORE', K.wks, '-inf', '(' .. int_str(A.ms - num(A.worker_ttl)), 'LIMIT', 0, n)
  if #old > 0 then redis.call('ZREM', K.wks, unpack(old)) end
  return #old
end

-- start makes queued job j running for a taker.
local function start(j, worker)
  detach(j)
  stat_wait(j.queue, j.queued_at or j.created_at)
  j.status, j.started_at, j.last_heartbeat, j.ended_at = 'running', A.now, nil, nil
  j.queued_at, j.sc, j.sr = nil, nil, nil
  j.attempt = num(j.attempt) + 1
  if worker and worker ~= '' then
    j.worker = worker
    redis.call('ZADD', K.wks, A.ms, worker)
    trim_workers(10)
  else
    j.worker = nil
  end
  attach(j)
  save_job(j)
end

-- TAKE_DROPS is the most pending jobs of deleted queues one take drops
-- before it answers with what it has.
local TAKE_DROPS = 500

-- take_from takes up to count jobs from queues (of this partition) in
-- order, for worker, honouring pause, concurrency and rate limits. It
-- returns the taken jobs ({id, queue, attempt, input}), the queues that do
-- not exist here, and what the inline promotion did. budget, when given,
-- is {left = bytes, any = whether the answer already holds a job}: a job
-- whose take object (stored input + queue + 96) does not fit in left is
-- not taken, unless it would be the answer's first, and budget.full is set.
local function take_from(queues, count, worker, swept, budget)
  local taken, missing, spans, settings = {}, {}, {}, {}
  for i, q in ipairs(queues) do
    settings[i] = queue_settings(q) or false
    if not settings[i] then missing[#missing + 1] = q end
  end
  if #missing > 0 then return taken, missing, spans end
  for i, q in ipairs(queues) do
    if #taken >= count or (budget and budget.full) then break end
    local qs = settings[i]
    do
      if num(qs.s) > 1 then spans[q] = {num(qs.k), num(qs.s)} end
      promote_due(q, count + 8, swept)
      local room = count - #taken
      local held
      if qs.pa then room, held = 0, 'paused' end
      local c, b, r = shard_allowance(q, qs)
      if room > 0 and c then
        local lo, hi = lex_range(q .. ' r')
        room = math.min(room, c - redis.call('ZLEXCOUNT', K.idx, lo, hi))
        if room <= 0 then held = 'concurrency' end
      end
      if room > 0 and b then
        room = rate_take(q, b, r, room)
        if room <= 0 then held = 'rate_limit' end
      end
      if held and not A.held then
        -- Why a take that finds nothing found nothing (a header of the
        -- 204): only when the limit held jobs back.
        local lo, hi = lex_range(q .. ' q')
        if redis.call('ZLEXCOUNT', K.idx, lo, hi) > 0 then A.held = held end
      end
      if num(qs.s) > 1 and (c or b) and room <= 0 and not qs.pa then
        -- Held back by its share: the store may move shares here.
        local tc, tb, tr = shard_targets(qs)
        local lo, hi = lex_range(q .. ' q')
        local members = qs.m and #qs.m or math.max(num(qs.s), num(qs.k))
        if (tc and c < tc) or (tb and (b < tb or r < tr)) or members > math.max(num(qs.k), 1) or
          (tc == 0 or tb == 0) and redis.call('ZLEXCOUNT', K.idx, lo, hi) > 0 then
          A.rebalance = A.rebalance or {}
          A.rebalance[#A.rebalance + 1] = q
        end
      end
      if room > 0 then
        local lo, hi = lex_range(q .. ' q')
        -- Jobs of a deleted queue of the same name are dropped on the way,
        -- up to TAKE_DROPS per call (A.dropping tells the caller to call
        -- again). A job whose take object does not fit in the budget is
        -- left queued (budget.full).
        local got, room0 = 0, room
        while room > 0 and not A.dropping and not (budget and budget.full) do
          local ms_ = redis.call('ZRANGEBYLEX', K.idx, lo, hi, 'LIMIT', 0, room)
          if #ms_ == 0 then break end
          for _, m in ipairs(ms_) do
            local id = id_of_member(m)
            local j = load_job(id)
            if j and j.status == 'queued' and old_pending(j) then
              if num(A.drops) >= TAKE_DROPS then
                A.dropping = true
                break
              end
              A.drops = num(A.drops) + 1
              remove_job(j, 'deleted')
            elseif j and j.status == 'queued' then
              if budget then
                local size = (j.input and #j.input or redis.call('HSTRLEN', K.inp, id)) + #q + 96
                if (budget.any or #taken > 0) and size > budget.left then
                  budget.full = true
                  break
                end
                budget.left = budget.left - size
              end
              start(j, worker)
              room = room - 1
              got = got + 1
              taken[#taken + 1] = {id = id, queue = q, attempt = j.attempt,
                input = j.input or redis.call('HGET', K.inp, id) or nil}
            else
              unqueue_member(q, m)
            end
            lo = '(' .. m
          end
        end
        if budget and budget.full and b and got < room0 then
          -- Give back the rate tokens of the jobs left for the next take.
          local t, l = string.match(redis.call('HGET', K.rl, q) or '', '^(%S+) (%S+)$')
          if t then redis.call('HSET', K.rl, q, string.format('%.6f %s', num(t) + room0 - got, l)) end
        end
      end
    end
  end
  return taken, missing, spans
end

-- take_reply encodes a take's reply by hand (it is on every worker's
-- path): the taken jobs with their inputs spliced in as JSON, and t's other
-- fields only when they hold something.
local function take_reply(t, taken)
  drain_notes()
  local parts = {}
  for i, tj in ipairs(taken) do
    parts[i] = '{"id":"' .. tj.id .. '","queue":"' .. tj.queue .. '","attempt":' ..
      int_str(tj.attempt) .. ',"input":' .. (tj.input or 'null') .. '}'
  end
  local out = '{"jobs":[' .. table.concat(parts, ',') .. ']'
  t.woken, t.effects, t.rebalance = A.woken, A.effects, A.rebalance
  for k, v in pairs(t) do
    if type(v) ~= 'table' or next(v) ~= nil then
      out = out .. ',' .. cjson.encode(k) .. ':' .. cjson.encode(v)
    end
  end
  return out .. '}'
end
