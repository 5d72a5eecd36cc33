-- queue_size.lua: the number of queued jobs of a queue (GET /queue/{name}/size).
--
-- KEYS[1] -> {ns}:queue:<name>  HASH of the settings
-- ARGV[1] -> key prefix
-- ARGV[2] -> queue name
--
-- Returns {2, name} when the queue does not exist, else {0, size}. Read-only.

if redis.call('EXISTS', KEYS[1]) == 0 then return {QUEUE_NOT_FOUND, ARGV[2]} end
return {OK, redis.call('ZCARD', k_pending(ARGV[2]))}
