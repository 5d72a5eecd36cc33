-- take.lua: take jobs from queues of this partition (GET /queue/{name}/job,
-- GET /job?queues=).
--
-- A.queues -> the queues, in order of preference
-- A.count  -> most jobs to take
-- A.worker -> who takes them ('' for nobody named)
-- A.inline -> most overdue running jobs (of any queue here) to time out
--             first, so polling workers see timeouts between sweeps
-- A.max_bytes -> the answer's byte budget left; A.any -> the answer
--             already holds jobs (see take_from): the jobs that do not fit
--             are left queued
-- A.push   -> the push dispatcher's take: without it, a queue whose jobs
--             are delivered by push (setting pu) refuses the take; with
--             it, a queue without push does (not_push). A.min_timeout ->
--             with A.push: seconds the taken jobs' timeout and heartbeat
--             timeout are raised to, so no sweep times a job out while
--             it is being delivered
-- A.wait   -> when > 0 and nothing is taken: the taker will wait up to this
--             many ms; the queues are marked as waited on until then, so
--             the scripts that may let it take a job wake it
--
-- Reply {jobs = [{id, queue, attempt, input}], missing = [queues that do not
-- exist here], next_due = ms of the earliest due job of these queues, or of
-- the next rate limit token of one whose queued jobs wait for it (only
-- when nothing was taken and A.wait is set), swept = {outcome = ids},
-- dropping = true when it stopped early after dropping many jobs of a
-- deleted queue of the same name: call again at once, full = true when a
-- job was left for want of bytes (A.max_bytes, A.any: the answer already
-- holds jobs from an earlier call), held = 'paused', 'concurrency' or
-- 'rate_limit' when nothing was taken because that limit held back a
-- queue's queued jobs}. Errors push_queue {queue}, not_push {queue}:
-- nothing is taken.

for _, q in ipairs(A.queues) do
  local qs = queue_settings(q)
  if qs and qs.pu and not A.push then return fail('push_queue', {queue = q}) end
  if qs and A.push and not qs.pu then return fail('not_push', {queue = q}) end
end
local swept = {}
if num(A.inline) > 0 then sweep_index(K.run, timeout_step, num(A.inline), swept) end
local budget = A.max_bytes and {left = num(A.max_bytes), any = A.any}
local taken, missing, spans = take_from(A.queues, num(A.count), A.worker, swept, budget)
local floor = num(A.min_timeout)
if A.push and floor > 0 then
  for _, tj in ipairs(taken) do
    local j = load_job(tj.id)
    if j then
      local t, h = num(j.timeout), num(j.heartbeat_timeout)
      if (t > 0 and t < floor) or (h > 0 and h < floor) then
        if t > 0 and t < floor then j.timeout = floor end
        if h > 0 and h < floor then j.heartbeat_timeout = floor end
        save_job(j)
        redis.call('ZADD', K.run, int_str(running_deadline(j)), j.id)
      end
    end
  end
end
local t = {missing = missing, swept = swept, spans = spans, dropping = A.dropping, full = budget and budget.full,
  held = #taken == 0 and A.held or nil}
if #taken == 0 and num(A.wait) > 0 and not A.dropping then
  local until_ms = A.ms + num(A.wait)
  local next_due
  local function due_at(due)
    if not next_due or due < next_due then next_due = due end
  end
  for _, q in ipairs(A.queues) do
    local qs = queue_settings(q)
    if qs then
      if num(redis.call('HGET', K.q, q .. ' w')) < until_ms then
        redis.call('HSET', K.q, q .. ' w', until_ms)
      end
      local first = redis.call('ZRANGEBYLEX', K.dq, '[' .. q .. ' ', '(' .. q .. '!', 'LIMIT', 0, 1)[1]
      if first then due_at(num(string.match(string.sub(first, #q + 3), '^(%d+)'))) end
      -- Queued jobs held back by the rate limit (this copy's share of
      -- it): its next token.
      local st = qs.rl and not qs.pa and redis.call('HGET', K.rl, q)
      if st then
        local lo, hi = lex_range(q .. ' q')
        local _, _, rate = shard_allowance(q, qs)
        rate = num(rate)
        local tokens, last = string.match(st, '^(%S+) (%S+)$')
        tokens = num(tokens) + math.max(A.ms - num(last), 0) / 1000 * rate
        if rate > 0 and tokens < 1 and redis.call('ZLEXCOUNT', K.idx, lo, hi) > 0 then
          due_at(A.ms + math.ceil((1 - tokens) / rate * 1000))
        end
      end
    end
  end
  t.next_due = next_due
end
return take_reply(t, taken)
