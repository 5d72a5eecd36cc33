-- info.lua: job counts per queue and status, and the global counters
-- (/info), read-only. Queues are those registered here and those that
-- still have jobs here (found by walking the idx index queue by queue).
--
-- Reply {queues = {name = {status code = count}}, totals = {name = n},
-- registered = [names]}.

local queues, registered = {}, {}
local function count(q)
  local c = {}
  for _, code in pairs(CODE) do
    local lo, hi = lex_range(q .. ' ' .. code)
    local n = redis.call('ZLEXCOUNT', K.idx, lo, hi)
    if n > 0 then c[code] = n end
  end
  queues[q] = c
end
for _, f in ipairs(redis.call('HKEYS', K.q)) do
  if not string.find(f, ' ', 1, true) then
    registered[#registered + 1] = f
    count(f)
  end
end
local from = '-'
while true do
  local m = redis.call('ZRANGEBYLEX', K.idx, from, '+', 'LIMIT', 0, 1)[1]
  if not m then break end
  local q = string.match(m, '^(%S+) ')
  if not q then break end
  if not queues[q] then count(q) end
  from = '[' .. q .. '!'
end
local totals = {}
local flat = redis.call('HGETALL', K.tot)
for i = 1, #flat, 2 do totals[flat[i]] = flat[i + 1] end
return cjson.encode({queues = queues, totals = totals, registered = registered})
