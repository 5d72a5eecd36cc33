-- drop_queue.lua: drop up to A.limit pending jobs of deleted queues
-- (K.drop: queue -> {g = generation, r = range, m = last member}).
--
-- Jobs of a later generation (the queue was created again meanwhile) stay.
-- Progress is kept in K.drop after every job, so a crash loses nothing and
-- a second dropper does no harm. Reply {dropped = count, more}.

local RANGES = {'q', 's', 'w'}
local budget = num(A.limit)
local dropped = 0
for _, q in ipairs(redis.call('HKEYS', K.drop)) do
  if budget <= 0 then break end
  local st = decode(redis.call('HGET', K.drop, q)) or {}
  local r = num(st.r)
  if r < 1 then r = 1 end
  while budget > 0 and r <= #RANGES do
    local lo, hi = lex_range(q .. ' ' .. RANGES[r])
    if st.m then lo = '(' .. st.m end
    local want = budget
    local ms_ = redis.call('ZRANGEBYLEX', K.idx, lo, hi, 'LIMIT', 0, want)
    for _, m in ipairs(ms_) do
      local j = load_job(id_of_member(m))
      if j and num(j.gen) <= num(st.g) and (j.status == 'queued' or j.status == 'scheduled' or j.status == 'waiting') then
        remove_job(j, 'deleted')
        dropped = dropped + 1
      elseif not j then
        redis.call('ZREM', K.idx, m)
      end
      st.m = m
      budget = budget - 1
    end
    if #ms_ < want then r, st.m = r + 1, nil end
  end
  if r > #RANGES then
    redis.call('HDEL', K.drop, q)
  else
    st.r = r
    redis.call('HSET', K.drop, q, cjson.encode(st))
  end
end
return reply({dropped = dropped, more = redis.call('HLEN', K.drop) > 0})
