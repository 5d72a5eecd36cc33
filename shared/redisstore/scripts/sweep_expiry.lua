-- sweep_expiry.lua: delete ended jobs whose expires_after has passed.
--
-- KEYS[1] -> {ns}:ended  ZSET id -> expiry time (ms), +inf for never
-- ARGV[1] -> key prefix
-- ARGV[2] -> now, microseconds
-- ARGV[3] -> batch limit
--
-- Returns {expired_ids, {}, dropped_ids, more, next}. An expired job is
-- removed exactly as DELETE /job/{id} would.

local now_ms = ms(ARGV[2])
local limit = num(ARGV[3])
local expired, dropped = {}, {}
local ids = due_ids(KEYS[1], now_ms, limit)
for _, id in ipairs(ids) do
  local r = expiry_step(id, now_ms)
  if r == 'expired' then expired[#expired + 1] = id
  elseif r == 'dropped' then dropped[#dropped + 1] = id end
end
local more = 0
if #ids >= limit then more = 1 end
return {expired, {}, dropped, more, next_score(KEYS[1])}
