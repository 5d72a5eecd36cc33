-- shares.lua: the limit shares of one copy of a sharded queue (limits.lua,
-- shard_targets): report them, or raise them to their targets.
--
-- A.queue; A.raise with A.v -> raise this copy's allowance to its targets,
-- if its settings are at version A.v and its running jobs fit its
-- concurrency target (the caller found every copy at A.v, within its
-- targets).
-- Reply {v, running, live (queued, waiting, running and due jobs of the
-- queue here), fits (running and allowance within the concurrency target),
-- below (the allowance is below the targets), settings (the JSON text)};
-- missing = true when the queue has no copy here.

local q = A.queue
local text = redis.call('HGET', K.q, q)
local qs = decode(text)
if not qs then return reply({missing = true}) end
local function count(code)
  local lo, hi = lex_range(q .. ' ' .. code)
  return redis.call('ZLEXCOUNT', K.idx, lo, hi)
end
local running = count('r')
local tc, tb, tr = shard_targets(qs)
if A.raise and num(qs.v) == num(A.v) and (not tc or running <= tc) then
  set_allowance(q, qs, qs, true)
end
local c, b, r = shard_allowance(q, qs)
local lo, hi = lex_range(q)
return reply({v = num(qs.v), running = running,
  live = count('q') + count('w') + running + redis.call('ZLEXCOUNT', K.dq, lo, hi),
  fits = not tc or math.max(running, c) <= tc,
  below = (tc and c < tc) or (tb and (b < tb or r < tr)) or false, settings = text})
