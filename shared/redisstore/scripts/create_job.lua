-- create_job.lua: create a job at the back of a queue (POST /queue/{name}/job).
--
-- KEYS[1]  -> {ns}:queue:<name>  HASH of the queue's settings
-- ARGV[1]  -> key prefix
-- ARGV[2]  -> queue name
-- ARGV[3]  -> now, microseconds (created_at)
-- ARGV[4]  -> input as compact JSON, '' for none
-- ARGV[5]  -> tags as a JSON array, '' when the job has no tags
-- ARGV[6]  -> timeout in seconds, '' to inherit the queue's
-- ARGV[7]  -> heartbeat_timeout in seconds, '' to inherit
-- ARGV[8]  -> expires_after in seconds, '' to inherit
-- ARGV[9]  -> retries, '' to inherit
-- ARGV[10] -> 'inherit' to copy the queue's retry_delays, 'set' to use ARGV[11]
-- ARGV[11] -> retry_delays as a JSON array of whole seconds, '' for none
-- ARGV[12..] -> the tags, one per argument (the members of the tag sets)
--
-- Returns {2, name} when the queue does not exist (nothing written), else
-- {0, id} with the new job id (from {ns}:job_id, first 1, never reused).

local q = ARGV[2]
local s = redis.call('HMGET', KEYS[1], 'timeout', 'heartbeat_timeout',
  'expires_after', 'retries', 'retry_delays')
-- A queue's hash always holds its settings: none at all means no queue.
if not (s[1] or s[2] or s[3] or s[4] or s[5]) then return {QUEUE_NOT_FOUND, q} end
local function pick(v, i)
  if v ~= '' then return v end
  return s[i] or '0'
end

local id = int_str(redis.call('INCR', k_job_id()))
local key = k_job(id)
local fields = {'id', id, 'queue', q, 'status', 'queued',
  'created_at', ARGV[3], 'timeout', pick(ARGV[6], 1),
  'heartbeat_timeout', pick(ARGV[7], 2), 'expires_after', pick(ARGV[8], 3),
  'retries', pick(ARGV[9], 4), 'retries_attempted', '0'}
local function opt(name, v)
  if v ~= '' then fields[#fields + 1] = name; fields[#fields + 1] = v end
end
opt('input', ARGV[4])
opt('tags', ARGV[5])
if ARGV[10] == 'inherit' then opt('retry_delays', s[5] or '') else opt('retry_delays', ARGV[11]) end
redis.call('HSET', key, unpack(fields))
for i = 12, #ARGV do
  redis.call('ZADD', k_tag(ARGV[i]), id, id)
end

local seq = redis.call('INCR', k_seq())
redis.call('ZADD', k_pending(q), int_str(seq), id)
redis.call('SADD', k_jobqueues(), q)
stat('created')
return {OK, id}
