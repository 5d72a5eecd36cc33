-- queues.lua: a queue's settings as one call reads them, its earliest due
-- time, and the wake-ups of long-polling takers.

-- SETTINGS remembers the decoded settings of the queues by their text: a
-- library's functions share it across calls (a script sent with EVALSHA
-- starts with an empty one), and text that changed is decoded again, so it
-- never serves stale settings. Bounded by dropping it all past 1000 queues.
local SETTINGS, SETTINGS_N = {}, 0

-- queue_settings is the settings of queue q in this partition (nil when the
-- queue does not exist here), whether a take waits on it (long-poll), and
-- the earliest time (ms) a job of q may fall due here: nil when unknown,
-- math.huge when none is pending (see note_due). One read per queue and
-- call (A.qs keeps it), so a script may ask again freely; a script that
-- changes the settings field reads no more after.
local function queue_settings(q)
  A.qs = A.qs or {}
  local c = A.qs[q]
  if not c then
    local r = redis.call('HMGET', K.q, q, q .. ' w', q .. ' d')
    c = {false, num(r[2]) > A.ms, r[3] and num(r[3])}
    if r[1] then
      local m = SETTINGS[q]
      if m and m[1] == r[1] then
        c[1] = m[2]
      else
        c[1] = decode(r[1]) or false
        if SETTINGS_N >= 1000 then SETTINGS, SETTINGS_N = {}, 0 end
        if not m then SETTINGS_N = SETTINGS_N + 1 end
        SETTINGS[q] = {r[1], c[1]}
      end
    end
    A.qs[q] = c
  end
  if not c[1] then return nil, false end
  return c[1], c[2], c[3]
end

-- note_due lowers queue q's earliest due time here (the "<q> d" field of
-- K.q) to due (ms), so takes promote the job once it falls due. The field
-- may be earlier than the truth (a due job left another way); a take then
-- looks once and corrects it.
local function note_due(q, due)
  local f = q .. ' d'
  local cur = redis.call('HGET', K.q, f)
  if not cur or num(cur) > due then redis.call('HSET', K.q, f, int_str(due)) end
end

-- wake tells long-polling takers of queue q to look again (a job became
-- ready, a running job freed a concurrency slot, the settings changed):
-- A.woken collects each queue's name once; the store publishes them after
-- the call.
local function wake(q, waiting)
  if not waiting then return end
  A.wq = A.wq or {}
  if A.wq[q] then return end
  A.wq[q] = true
  A.woken = A.woken or {}
  A.woken[#A.woken + 1] = q
end

-- freed tells the long-polling takers of j's queue that j stopped running:
-- a queue at its concurrency limit may give a job again.
local function freed(j)
  local qs, waiting = queue_settings(j.queue)
  if qs and num(qs.c) > 0 then wake(j.queue, waiting) end
end
