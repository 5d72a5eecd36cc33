-- take.lua: take jobs from queues of this partition (GET /queue/{name}/job,
-- GET /job?queues=).
--
-- A.queues -> the queues, in order of preference (one wake list each, KW)
-- A.count  -> most jobs to take
-- A.worker -> who takes them ('' for nobody named)
-- A.inline -> most overdue running jobs (of any queue here) to time out
--             first, so polling workers see timeouts between sweeps
-- A.wait   -> when > 0 and nothing is taken: the taker will wait up to this
--             many ms for a wake token: the wake lists are reset and the
--             queues marked as waited on until then
--
-- Reply {jobs = [{id, queue, attempt, input}], missing = [queues that do not
-- exist here], next_due = ms of the earliest due job of these queues (only
-- when nothing was taken), swept = {outcome = ids}}.

local swept = {}
if num(A.inline) > 0 then sweep_index(K.run, timeout_step, num(A.inline), swept) end
local taken, missing, spans = take_from(A.queues, num(A.count), A.worker, swept)
local t = {missing = missing, swept = swept, spans = spans}
if #taken == 0 and num(A.wait) > 0 then
  local until_ms = A.ms + num(A.wait)
  local next_due
  for i, q in ipairs(A.queues) do
    if queue_settings(q) then
      redis.call('DEL', KW[i])
      if num(redis.call('HGET', K.q, q .. ' w')) < until_ms then
        redis.call('HSET', K.q, q .. ' w', until_ms)
      end
      local first = redis.call('ZRANGEBYLEX', K.dq, '[' .. q .. ' ', '(' .. q .. '!', 'LIMIT', 0, 1)[1]
      if first then
        local due = num(string.match(string.sub(first, #q + 3), '^(%d+)'))
        if not next_due or due < next_due then next_due = due end
      end
    end
  end
  t.next_due = next_due
end
return take_reply(t, taken)
