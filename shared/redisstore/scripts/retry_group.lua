-- retry_group.lua: requeue up to A.limit jobs of failure group A.group in
-- this partition (POST /failures/{group}/retry, qless unfail).
--
-- A.queue (optional) -> requeue them into this queue instead of their own:
-- moved here when the queue exists in this partition, else copied there
-- through the outbox (a new job, in partition A.part) and deleted here.
-- A.must_exist -> a queue: answer queue_not_found unless it exists here.
-- Reply {retried = n}. A job whose key another pending job holds stays, and
-- so does one whose queue was deleted (also when one of its name was
-- created since) unless A.queue names another.

if A.must_exist and not queue_settings(A.must_exist) then return fail('queue_not_found') end
local lo, hi = lex_range(esc(A.group))
local n = 0
local target = A.queue and queue_settings(A.queue)
for _, m in ipairs(redis.call('ZRANGEBYLEX', K.fg, lo, hi, 'LIMIT', 0, num(A.limit))) do
  local j = load_job(id_of_member(m))
  local q = A.queue or (j and j.queue)
  if j and j.key and key_holder('p', q, j.key) then
    j = nil -- the same work is pending already: leave this one failed
  elseif j then
    if A.queue and A.queue ~= j.queue and not target then
      effect({op = 'copy', queue = A.queue, job = j.id, meta = redis.call('HGET', K.j, j.id),
        input = redis.call('HGET', K.inp, j.id) or nil, part = A.part})
      remove_job(j, 'moved')
      n = n + 1
    else
      if A.queue and A.queue ~= j.queue then
        detach(j)
        untag_all(j)
        j.queue = A.queue
        for _, t in ipairs(tags_of(j)) do redis.call('ZADD', K.tag, 0, tag_member(t, j.id)) end
        if j.tracked then redis.call('ZADD', K.trk, 0, j.queue .. ' ' .. lp(j.id)) end
        if not requeue(j, false, true) then n = n + 1 end
      elseif queue_settings(j.queue) and not old_generation(j, queue_settings(j.queue)) and not requeue(j, false) then
        n = n + 1
      end
    end
  end
end
return reply({retried = n})
