-- fold_stats.lua: fold pending statistics (K.sp, see stats.lua) into the
-- figures they count in: the totals, the day's statistics and the
-- per-minute counts of their minute (after each sweep, stats.go's
-- foldDue).
--
-- A.fields -> {{field, day, hour}...}: fields of K.sp, each with the KW
-- index of the st:<day> hash of its minute and of its sm:<hour> hash (0
-- when that hour is past reading: per-minute counts are kept two hours).
-- Each field is deleted and added where it counts in this call; a field
-- already gone (another call folded it) is skipped, so a call can run
-- twice. A figure that is not a number stays as it is (its reads report
-- it) and the call goes on. Reply {done = fields folded}.

local n = 0
for _, x in ipairs(A.fields) do
  local f, day, hour = x[1], num(x[2]), num(x[3])
  local q, m, code, b = parse_pending(f)
  local v = q and day > 0 and redis.call('HGET', K.sp, f)
  if v then
    redis.call('HDEL', K.sp, f)
    local c, what = num(v), PENDING[code]
    if what.tot then redis.pcall('HINCRBY', K.tot, what.tot, c) end
    if what.day then fold_add(KW[day], q .. ' ' .. what.day, c, A.stats_ttl) end
    if b ~= '' then fold_add(KW[day], q .. ' r' .. b, c, A.stats_ttl) end
    if what.minute and hour > 0 then fold_add(KW[hour], q .. ' ' .. (m % 60) .. what.minute, c, MINUTE_TTL) end
    n = n + 1
  end
end
return cjson.encode({done = n})
