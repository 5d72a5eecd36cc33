-- limits.lua: concurrency and rate limits, split between the copies of a
-- sharded queue.

-- Limits of a sharded queue. Its concurrency and rate limit are split
-- between its members: the shard indexes in its settings' m (absent: every
-- partition it spans, 0 .. s-1), those beyond its shards k first (they
-- only drain), then 0 .. k-1. shard_targets is what this copy (shard index
-- x) gets under settings qs: its concurrency share (nil: no limit), burst
-- share and rate (nil: no rate limit). A copy's allowance (the '<q> a'
-- field of K.q: {g, v, c, b, r}) is what it may use now: a change of the
-- settings lowers it at once to at most the new targets (set_allowance), and
-- shares.lua raises it to them only once every copy has lowered its own and
-- runs no more than its new share, so the copies together never exceed the
-- queue's limits while shares move. An unsharded queue has its whole limits.
local function shard_targets(qs)
  local c = num(qs.c) > 0 and num(qs.c) or nil
  local b, r = qs.rl and num(qs.rl.b), qs.rl and num(qs.rl.r)
  if num(qs.s) <= 1 then return c, b, r end
  local k, x = math.max(num(qs.k), 1), num(qs.x)
  local members = qs.m
  if not members then
    members = {}
    for i = 0, math.max(num(qs.s), k) - 1 do members[#members + 1] = i end
  end
  local n, rank = 0, nil
  for pass = 1, 2 do
    for _, i in ipairs(members) do
      if (pass == 1) == (num(i) >= k) then
        if num(i) == x then rank = n end
        n = n + 1
      end
    end
  end
  if not rank then return c and 0, b and 0, r and 0 end
  local function split(total)
    if not total then return nil end
    local share = math.floor(total / n)
    if rank < total % n then share = share + 1 end
    return share
  end
  return split(c), split(b), r and r / n
end

-- shard_allowance is what this copy of queue q (settings qs) may use now:
-- concurrency, burst and rate as shard_targets; a copy without a current
-- allowance (an unsharded queue, or one written by an earlier version) uses
-- its targets.
local function shard_allowance(q, qs)
  local c, b, r = shard_targets(qs)
  if num(qs.s) <= 1 then return c, b, r end
  local a = decode(redis.call('HGET', K.q, q .. ' a'))
  if not a or num(a.g) ~= num(qs.g) then return c, b, r end
  local function low(t, v) if t and v then return math.min(t, num(v)) end return t end
  return low(c, a.c), low(b, a.b), low(r, a.r)
end

-- rate_settle brings queue q's token bucket to now under burst b and rate
-- r (what was allowed until now), then caps it to new_b: tokens earned
-- under one share are never spent at another's rate. No bucket yet is a
-- full one (b), or an empty one for a copy that had no share.
local function rate_settle(q, b, r, new_b)
  local st = redis.call('HGET', K.rl, q)
  local tokens = b
  if st then
    local t, l = string.match(st, '^(%S+) (%S+)$')
    tokens = math.min(b, num(t) + math.max(A.ms - num(l), 0) / 1000 * r)
  end
  redis.call('HSET', K.rl, q, string.format('%.6f %d', math.max(math.min(tokens, new_b), 0), A.ms))
end

-- set_allowance records this copy's allowance after its settings changed
-- from old (nil: the queue had no copy here) to qs: the smaller of what it
-- could use and its new targets, or (raise) its new targets. Returns
-- whether the allowance is now below the targets.
local function set_allowance(q, old, qs, raise)
  local c, b, r = shard_targets(qs)
  if num(qs.s) <= 1 or not (c or b) then
    redis.call('HDEL', K.q, q .. ' a')
    return false
  end
  local oc, ob, orate = 0, 0, 0
  if old and num(old.g) == num(qs.g) then oc, ob, orate = shard_allowance(q, old) end
  if qs.rv and num(qs.rv) == num(qs.v) then ob, orate = nil, nil end -- no rate limit before
  local nc, nb, nr = c, b, r
  if not raise then
    if c and oc then nc = math.min(c, oc) end
    if b and ob then nb, nr = math.min(b, ob), math.min(r, orate) end
  end
  if b and ob then rate_settle(q, ob, orate, nb) end
  redis.call('HSET', K.q, q .. ' a', cjson.encode({g = qs.g, v = num(qs.v), c = nc, b = nb, r = nr}))
  return (c and nc < c) or (b and (nb < b or nr < r)) or false
end

-- rate_take returns how many takes queue q's token bucket allows now (at
-- most want; burst and rate are this copy's) and consumes them.
local function rate_take(q, burst, rate, want)
  local st = redis.call('HGET', K.rl, q)
  local tokens, last = burst, A.ms
  if st then
    local t, l = string.match(st, '^(%S+) (%S+)$')
    tokens, last = num(t), num(l)
    tokens = math.min(burst, tokens + math.max(A.ms - last, 0) / 1000 * rate)
  end
  local n = math.min(want, math.floor(tokens))
  if n < 0 then n = 0 end
  redis.call('HSET', K.rl, q, string.format('%.6f %d', tokens - n, A.ms))
  return n
end
