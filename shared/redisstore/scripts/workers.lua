-- workers.lua: the workers of this partition seen since A.since (ms), with
-- their running and timed-out job counts (GET /workers), or one worker's
-- job ids (GET /workers/{name}), read-only.
--
-- A.name (optional) -> one worker. Reply {workers = [{name, last_seen,
-- running, timed_out}]} or {found, running = [ids], timed_out = [ids]}.

if A.name then
  local w = esc(A.name)
  local seen = redis.call('ZSCORE', K.wks, A.name)
  local t = {found = seen ~= false and num(seen) >= num(A.since), running = {}, timed_out = {}}
  for code, list in pairs({r = t.running, t = t.timed_out}) do
    local lo, hi = lex_range(w .. ' ' .. code)
    for _, m in ipairs(redis.call('ZRANGEBYLEX', K.wk, lo, hi)) do list[#list + 1] = id_of_member(m) end
  end
  return cjson.encode(t)
end
local out = {}
local seen = redis.call('ZRANGEBYSCORE', K.wks, A.since, '+inf', 'WITHSCORES')
for i = 1, #seen, 2 do
  local w = esc(seen[i])
  local function count(code)
    local lo, hi = lex_range(w .. ' ' .. code)
    return redis.call('ZLEXCOUNT', K.wk, lo, hi)
  end
  out[#out + 1] = {name = seen[i], last_seen = seen[i + 1], running = count('r'), timed_out = count('t')}
end
return cjson.encode({workers = out})
