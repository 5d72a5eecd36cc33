-- delete_queue.lua: delete a queue and its queued jobs (DELETE /queue).
--
-- KEYS[1] -> {ns}:queue:<name>  HASH of the settings
-- ARGV[1] -> key prefix
-- ARGV[2] -> queue name
--
-- Returns {2, name} when the queue does not exist, else {0, n} with n the
-- number of queued jobs deleted. Removes the settings, the pending set, every
-- queued job (hash and tag memberships) and the registry entry. Running,
-- failed and ended jobs of the queue stay, and keep their per-queue indexes
-- (so /info and job_ids still show them). Costs O(queued jobs).

local q = ARGV[2]
if redis.call('EXISTS', KEYS[1]) == 0 then return {QUEUE_NOT_FOUND, q} end
local n = 0
for _, id in ipairs(redis.call('ZRANGE', k_pending(q), 0, -1)) do
  local j = load_job(id)
  if j and j.status == 'queued' then
    remove_job(j)
    n = n + 1
  end
end
redis.call('DEL', KEYS[1], k_pending(q))
redis.call('SREM', k_queues(), q)
jq_cleanup(q)
return {OK, n}
