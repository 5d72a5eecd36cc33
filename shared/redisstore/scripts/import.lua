-- import.lua: write what import.go copied from an upstream Ocypod 0.8
-- database into this partition. Every op can run again (a resumed import)
-- without doubling anything.
--
-- A.op = 'queue'    A.queue, A.home, A.span, A.settings {t, h, e, r, d}: in
--                   the queue's home partition, create it (a new generation)
--                   unless an earlier run did, and widen its span to A.span
--                   (the partitions holding its copied jobs). Reply
--                   {settings = the stored settings as JSON text}.
-- A.op = 'counters' A.seq, A.rq: the id and requeue counters are raised to
--                   at least these (new ids and requeues come after every
--                   copied job); A.totals {name = decimal}: Ocypod's
--                   statistics, set (not added). Reply {}.
-- A.op = 'jobs'     A.jobs: records {id, queue, status, created_at,
--                   started_at?, ended_at?, last_heartbeat?, timeout,
--                   heartbeat_timeout, expires_after, retries,
--                   retries_attempted, retry_delays? (JSON text of seconds),
--                   tags? (JSON text), tag_list?, input?, output?, attempt,
--                   pos? (a queued job's place in its queue), retry? (a
--                   failed job Ocypod still had to decide on)}. A job whose
--                   id is here already (copied by an earlier run) is left
--                   alone. Reply {copied = [ids], present = count}.

if A.op == 'queue' then
  local s = decode(redis.call('HGET', K.q, A.queue))
  if not s then
    s = {g = redis.call('HINCRBY', K.ctr, 'gen', 1), o = A.home, k = 1, s = 1}
    for _, f in ipairs({'t', 'h', 'e', 'r', 'd'}) do s[f] = A.settings[f] end
  end
  if num(s.s) < num(A.span) then s.s = num(A.span) end
  local text = cjson.encode(s)
  redis.call('HSET', K.q, A.queue, text)
  return cjson.encode({settings = text})
elseif A.op == 'counters' then
  if num(redis.call('HGET', K.ctr, 'id')) < num(A.seq) then redis.call('HSET', K.ctr, 'id', int_str(num(A.seq))) end
  if num(redis.call('HGET', K.ctr, 'rq')) < num(A.rq) then redis.call('HSET', K.ctr, 'rq', int_str(num(A.rq))) end
  if type(A.totals) == 'table' then
    for name, v in pairs(A.totals) do redis.call('HSET', K.tot, name, v) end
  end
  return '{}'
elseif A.op == 'jobs' then
  local copied, present = {}, 0
  for _, r in ipairs(A.jobs) do
    if redis.call('HEXISTS', K.j, r.id) == 1 then
      present = present + 1
    else
      local j = {id = r.id, queue = r.queue, status = r.status, created_at = r.created_at,
        started_at = r.started_at, ended_at = r.ended_at, last_heartbeat = r.last_heartbeat,
        timeout = r.timeout, heartbeat_timeout = r.heartbeat_timeout, expires_after = r.expires_after,
        retries = r.retries, retries_attempted = r.retries_attempted, retry_delays = r.retry_delays,
        tags = r.tags, attempt = r.attempt,
        input = r.input and #r.input <= 256 and r.input or nil}
      local qs = queue_settings(j.queue)
      if qs then j.gen = qs.g end
      -- Copied queued jobs sort before any job queued here later (sc 0),
      -- in Ocypod's order among themselves (sr).
      if j.status == 'queued' then j.sc, j.sr = 0, r.pos end
      if r.retry then j.due = retry_due(j, j.status) end
      attach(j)
      save_job(j)
      if r.input and #r.input > 256 then redis.call('HSET', K.inp, r.id, r.input) end
      if r.output then redis.call('HSET', K.out, r.id, r.output) end
      for _, t in ipairs(r.tag_list or {}) do redis.call('ZADD', K.tag, 0, tag_member(t, r.id)) end
      copied[#copied + 1] = r.id
    end
  end
  return cjson.encode({copied = copied, present = present})
end
return cjson.encode({err = 'unknown_op'})
