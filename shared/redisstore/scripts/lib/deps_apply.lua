-- deps_apply.lua: delivering the dependency outcomes a call queued, here
-- or through the outbox.

-- apply_dep tells waiting job jid that its dependency dep ended (why):
-- 'completed' removes it from what the job waits on (the job goes on when
-- nothing is left); any other end cancels the job, naming the dependency.
-- Idempotent: a second delivery finds nothing to do.
local function apply_dep(jid, dep, why)
  local j = load_job(jid)
  if not j or not (j.status == 'waiting' or j.status == 'scheduled' or j.status == 'queued') then return end
  local left = decode(j.waiting_on)
  if not left then return end
  local rest, found = {}, false
  for _, d in ipairs(left) do
    if tostring(d) == tostring(dep) then found = true else rest[#rest + 1] = d end
  end
  if not found then return end
  if why ~= 'completed' then
    finish(j, 'cancelled', {group = 'dependency', message = 'dependency ' .. dep .. ' ' .. why})
    return
  end
  detach(j)
  if #rest == 0 then j.waiting_on = nil else j.waiting_on = cjson.encode(rest) end
  if j.status == 'waiting' then make_runnable(j) end
  settle(j)
end

-- drain_notes delivers the dependency outcomes queued by after_end.
local function drain_notes()
  local i = 1
  while i <= #NOTES do
    local n = NOTES[i]
    local to = partition_of(n.job)
    if to == A.p then
      apply_dep(n.job, n.dep, n.why)
    else
      effect({op = 'dep', to = to, job = n.job, dep = n.dep, why = n.why})
    end
    i = i + 1
  end
  NOTES = {}
end
