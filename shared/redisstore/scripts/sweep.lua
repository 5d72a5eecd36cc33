-- sweep.lua: one bounded pass of a sweep over this partition.
--
-- A.kind  -> 'run' (running jobs past their deadline -> timed_out), 'due'
--            (scheduled jobs and pending retries that fell due), 'exp' (ended
--            jobs past expires_after -> deleted)
-- A.limit -> most entries to handle
-- A.worker_ttl -> with 'exp': also forget up to A.limit workers not seen
--            for this many ms (see trim_workers)
-- Reply {done = {outcome = ids}, more (the limit was reached), next (the
-- earliest score left, ms; absent when none)}.

local STEPS = {run = {K.run, timeout_step}, due = {K.due, due_step}, exp = {K.exp, expiry_step}}
local s = STEPS[A.kind]
local done = {}
local n = sweep_index(s[1], s[2], num(A.limit), done)
local t = {done = done, more = n >= num(A.limit)}
if A.kind == 'exp' and trim_workers(num(A.limit)) >= num(A.limit) then t.more = true end
local first = redis.call('ZRANGE', s[1], 0, 0, 'WITHSCORES')
if first[2] then t.next = first[2] end
return reply(t)
