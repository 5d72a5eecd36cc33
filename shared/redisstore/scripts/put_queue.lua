-- put_queue.lua: create a queue or replace all of its settings (PUT /queue).
--
-- KEYS[1] -> {ns}:queue:<name>  HASH of the settings
-- ARGV[1] -> key prefix
-- ARGV[2] -> queue name
-- ARGV[3] -> timeout, whole seconds
-- ARGV[4] -> heartbeat_timeout, whole seconds
-- ARGV[5] -> expires_after, whole seconds
-- ARGV[6] -> retries
-- ARGV[7] -> retry_delays as a JSON array of whole seconds, '' for none
--
-- Returns {0, created}: created is 1 when the queue is new, 0 when its
-- settings were replaced. Jobs already created keep the settings they copied.

local created = 1 - redis.call('EXISTS', KEYS[1])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'timeout', ARGV[3], 'heartbeat_timeout', ARGV[4],
  'expires_after', ARGV[5], 'retries', ARGV[6])
if ARGV[7] ~= '' then
  redis.call('HSET', KEYS[1], 'retry_delays', ARGV[7])
end
redis.call('SADD', k_queues(), ARGV[2])
return {OK, created}
