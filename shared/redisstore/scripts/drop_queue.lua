-- drop_queue.lua: drop up to A.limit pending jobs of deleted queues
-- (K.drop: queue -> {g = generation, c = counts, r = range, m = last
-- member, f = jobs found in this pass}; see generations.lua's drop_of).
--
-- Jobs of a later generation (the queue was created again meanwhile) stay.
-- Progress is kept in K.drop after every call, so a crash loses nothing and
-- a second dropper does no harm. A job that moved to a range already
-- walked (a waiting job whose dependency completed) is found by another
-- pass: passes go on while the counts say jobs are left and the last pass
-- found some; a record whose counts are all zero is done at once (without
-- walking the jobs of the queue created again). Reply {dropped = count,
-- more}.

local RANGES = {'q', 's', 'w'}
local budget = num(A.limit)
local dropped = 0
for _, q in ipairs(redis.call('HKEYS', K.drop)) do
  if budget <= 0 then break end
  local st = drop_of(q) or {}
  local r = num(st.r)
  if r < 1 then r = 1 end
  local function none_left()
    if not st.c then return false end
    for _, n in pairs(st.c) do if num(n) > 0 then return false end end
    return true
  end
  if none_left() then r = #RANGES + 1 end
  while budget > 0 and r <= #RANGES do
    local lo, hi = lex_range(q .. ' ' .. RANGES[r])
    if st.m then lo = '(' .. st.m end
    local want = budget
    local ms_ = redis.call('ZRANGEBYLEX', K.idx, lo, hi, 'LIMIT', 0, want)
    for _, m in ipairs(ms_) do
      local j = load_job(id_of_member(m))
      if j and old_pending(j) then
        remove_job(j, 'deleted')
        dropped = dropped + 1
        st.f = num(st.f) + 1
      elseif not j then
        if RANGES[r] == 'q' then
          unqueue_member(q, m)
        else
          redis.call('ZREM', K.idx, m, q .. ' Q ' .. lp(id_of_member(m)))
        end
      end
      st.m = m
      budget = budget - 1
    end
    if #ms_ < want then r, st.m = r + 1, nil end
    if none_left() then
      r = #RANGES + 1
    elseif r > #RANGES and num(st.f) > 0 and st.c then
      r, st.f = 1, 0
    end
  end
  if r > #RANGES then
    save_drop(q, nil)
  else
    st.r = r
    save_drop(q, st)
  end
end
return reply({dropped = dropped, more = redis.call('HLEN', K.drop) > 0})
