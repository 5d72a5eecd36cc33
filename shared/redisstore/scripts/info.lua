-- info.lua: job counts per queue and status, and the global counters
-- (/info), read-only. Queues are those registered here and those that
-- still have jobs here (found by walking the idx index queue by queue).
-- Pending jobs of a deleted queue, not dropped yet, are not counted (a
-- deleted queue left with nothing else is not listed).
--
-- Queued jobs are counted by their queue's counter ("<queue> n" in K.q,
-- indexes.lua's count_queued), the other statuses by their idx range.
--
-- Reply {queues = {name = {status code = count}}, totals = {name = n},
-- registered = [names]}: the totals are K.tot's counters plus the
-- statistics still pending (stats.lua).

local queues, registered = {}, {}
local function count(q, listed)
  local c, any = {}, false
  local d = drop_of(q)
  for _, code in pairs(CODE) do
    local n
    if code == 'q' then
      n = num(redis.call('HGET', K.q, q .. ' n'))
    else
      local lo, hi = lex_range(q .. ' ' .. code)
      n = redis.call('ZLEXCOUNT', K.idx, lo, hi)
    end
    if d and d.c and d.c[code] then n = n - num(d.c[code]) end
    if n > 0 then c[code], any = n, true end
  end
  if listed or any then queues[q] = c end
end
for _, f in ipairs(redis.call('HKEYS', K.q)) do
  if not string.find(f, ' ', 1, true) then
    registered[#registered + 1] = f
    count(f, true)
  end
end
local from = '-'
while true do
  local m = redis.call('ZRANGEBYLEX', K.idx, from, '+', 'LIMIT', 0, 1)[1]
  if not m then break end
  local q = string.match(m, '^(%S+) ')
  if not q then break end
  if not queues[q] then count(q, false) end
  from = '[' .. q .. '!'
end
local totals = {}
local flat = redis.call('HGETALL', K.tot)
for i = 1, #flat, 2 do totals[flat[i]] = flat[i + 1] end
local add = {}
flat = redis.call('HGETALL', K.sp)
for i = 1, #flat, 2 do
  local w = PENDING[pending_code(flat[i])]
  if w and w.tot then add[w.tot] = num(add[w.tot]) + num(flat[i + 1]) end
end
for name, n in pairs(add) do
  -- (An unreadable counter stays as it is, for the reader to report.)
  if string.match(totals[name] or '0', '^%d+$') then totals[name] = int_str(num(totals[name]) + n) end
end
return cjson.encode({queues = queues, totals = totals, registered = registered})
