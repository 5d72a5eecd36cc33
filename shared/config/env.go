package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// EnvVar documents one OCYPOD_* environment variable.
type EnvVar struct {
	Name        string
	Default     string
	Description string

	apply func(c *Config, v string) error
}

// EnvVars lists every OCYPOD_* variable Load reads, in documentation order.
func EnvVars() []EnvVar {
	out := make([]EnvVar, len(envVars))
	copy(out, envVars)
	for i := range out {
		out[i].apply = nil
	}
	return out
}

// envVars is the table applyEnv walks. An empty value counts as unset, so a
// deployment template can pass "" for "use the default".
var envVars = []EnvVar{
	{"OCYPOD_REDIS_URL", "",
		"Redis URL: redis://[user:pass@]host[:port][/db], rediss:// for TLS, unix:///path/to/socket; empty: embedded miniredis locally, required on Lambda (redis.url)",
		func(c *Config, v string) error { c.Redis.URL = v; return nil }},
	{"OCYPOD_KEY_NAMESPACE", "",
		"Ocypod's key_namespace, the hash tag of every key: [A-Za-z0-9_.-]{0,64}; empty: the store's default (redis.key_namespace)",
		func(c *Config, v string) error { c.Redis.KeyNamespace = v; return nil }},
	{"OCYPOD_REDIS_CLUSTER", "false",
		"use a cluster client (ElastiCache cluster mode or Serverless configuration endpoint) (redis.cluster)",
		boolVar(func(c *Config) *bool { return &c.Redis.ClusterMode })},
	{"OCYPOD_PARTITIONS", "1",
		"partitions (hash tags, so cluster slots) the namespace's data spreads over, 1 to 1024; cannot change once data exists (redis.partitions)",
		intVar(1, MaxPartitions, func(c *Config) *int { return &c.Redis.Partitions })},
	{"OCYPOD_REDIS_SCRIPTS", "auto",
		"how scripts run: auto (Redis Functions where the server has them, else EVALSHA), functions or eval (redis.scripts)",
		func(c *Config, v string) error { c.Redis.Scripts = v; return nil }},
	{"OCYPOD_REDIS_POOL_SIZE", "0",
		"most Redis connections per process; 0: the client's default (redis.pool_size)",
		intVar(0, math.MaxInt32, func(c *Config) *int { return &c.Redis.PoolSize })},
	{"OCYPOD_REDIS_TIMEOUT", "2s",
		"dial, read and write timeout of every Redis call (redis.timeout)",
		durationVar(parseDuration, func(c *Config) *time.Duration { return &c.Redis.Timeout })},
	{"OCYPOD_REDIS_IAM_USER", "",
		"ElastiCache IAM auth as this user id (needs rediss://, OCYPOD_REDIS_CACHE_NAME and AWS_REGION); empty: no IAM auth (redis.iam_user)",
		func(c *Config, v string) error { c.Redis.IAMUser = v; return nil }},
	{"OCYPOD_REDIS_CACHE_NAME", "",
		"replication group id or serverless cache name the IAM token is signed for (redis.cache_name)",
		func(c *Config, v string) error { c.Redis.CacheName = v; return nil }},
	{"OCYPOD_REDIS_SERVERLESS", "false",
		"the cache is ElastiCache Serverless (IAM token for ResourceType=ServerlessCache) (redis.serverless)",
		boolVar(func(c *Config) *bool { return &c.Redis.Serverless })},
	{"OCYPOD_MAX_BODY_SIZE", "256KiB",
		"request body limit: a size such as 1MiB or 500kB, or a number of bytes; 0 means the default (server.max_body_size)",
		func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64) // a bare byte count is fine in a variable
			if err != nil || n < 0 {
				if n, err = ParseSize(v); err != nil {
					return err
				}
			}
			if n == 0 {
				n = DefaultMaxBodySize
			}
			c.Server.MaxBodySize = n
			return nil
		}},
	{"OCYPOD_WORKER_EXPIRY", "1h",
		"how long a worker is listed after it last took a job (server.worker_expiry)",
		durationVar(parseDuration, func(c *Config) *time.Duration { return &c.Server.WorkerExpiry })},
	{"OCYPOD_STATS_HISTORY", "30",
		"days of per-queue statistics kept (server.stats_history)",
		intVar(1, 3650, func(c *Config) *int { return &c.Server.StatsHistory })},
	{"OCYPOD_STRICT_INPUT", "false",
		"refuse unknown body keys and query parameters in pure Ocypod requests too (server.strict_input)",
		boolVar(func(c *Config) *bool { return &c.Server.StrictInput })},
	{"OCYPOD_MAX_LONG_POLLS", "1000",
		"most takes waiting (?wait=) at once in one process; past it a take answers at once (server.max_long_polls)",
		intVar(1, MaxLongPollsLimit, func(c *Config) *int { return &c.Server.MaxLongPolls })},
	{"OCYPOD_NEXT_JOB_DELAY", "0s",
		"wait before answering 204 on an empty queue (server.next_job_delay)",
		durationVar(parseDuration, func(c *Config) *time.Duration { return &c.Server.NextJobDelay })},
	{"OCYPOD_LOG_LEVEL", "info",
		"error, warn, info, debug or trace (server.log_level)",
		func(c *Config, v string) error {
			l, err := ParseLevel(v)
			c.Server.LogLevel = l
			return err
		}},
	{"OCYPOD_HOST", "127.0.0.1", "local server: listen address (server.host)",
		func(c *Config, v string) error { c.Server.Host = v; return nil }},
	{"OCYPOD_PORT", "8023", "local server: listen port, 0 for any free port (server.port)",
		func(c *Config, v string) error {
			n, err := strconv.ParseUint(v, 10, 16)
			if err != nil {
				return fmt.Errorf("expected a port number 0..65535, got %q", v)
			}
			c.Server.Port = uint16(n)
			return nil
		}},
	{"OCYPOD_ALLOWED_HOSTS", "",
		"local server: Host header values (and Origin hosts) it answers, comma-separated, each a name or IP with an optional port; empty: localhost, 127.0.0.1 and [::1] on a loopback address, no Host check otherwise (server.allowed_hosts)",
		func(c *Config, v string) error {
			hosts, err := parseAllowedHostsList(v)
			c.Server.AllowedHosts = hosts
			return err
		}},
	{"OCYPOD_PUSH_ALLOWED_HOSTS", "",
		"hosts push and callback targets may name, comma-separated, each a name or IP with an optional port; empty: loopback only in the local server, none on AWS (push.allowed_hosts)",
		func(c *Config, v string) error {
			hosts, err := parseAllowedHostsList(v)
			c.Push.AllowedHosts = hosts
			return err
		}},
	{"OCYPOD_EMBEDDED_MAX_MEMORY", "512MiB",
		"local server with the embedded miniredis: live heap past which creating jobs and writing outputs answer 507, a size such as 1GiB (redis.embedded_max_memory)",
		func(c *Config, v string) error {
			n, err := ParseSize(strings.TrimSpace(v))
			c.Redis.EmbeddedMaxMemory = n
			return err
		}},
	{"OCYPOD_TIMEOUT_CHECK_INTERVAL", "30s", "local server: how often running jobs are checked for timeouts (server.timeout_check_interval)",
		durationVar(parseDuration, func(c *Config) *time.Duration { return &c.Server.TimeoutCheckInterval })},
	{"OCYPOD_RETRY_CHECK_INTERVAL", "60s", "local server: how often failed jobs are checked for retries (server.retry_check_interval)",
		durationVar(parseDuration, func(c *Config) *time.Duration { return &c.Server.RetryCheckInterval })},
	{"OCYPOD_EXPIRY_CHECK_INTERVAL", "5m", "local server: how often ended jobs are checked for expiry (server.expiry_check_interval)",
		durationVar(parseDuration, func(c *Config) *time.Duration { return &c.Server.ExpiryCheckInterval })},
	{"OCYPOD_SHUTDOWN_TIMEOUT", "30s", "local server: graceful shutdown window, whole seconds, at most 65535s (server.shutdown_timeout)",
		durationVar(parseShutdown, func(c *Config) *time.Duration { return &c.Server.ShutdownTimeout })},
	{"OCYPOD_SWEEP_BUDGET", "50s", "how long one sweeper Lambda invocation may keep sweeping (sweep.budget)",
		durationVar(parseDuration, func(c *Config) *time.Duration { return &c.Sweep.Budget })},
	{"OCYPOD_SWEEP_BATCH", "100", "most jobs one sweep call handles, 1..10000 (sweep.batch)",
		intVar(1, MaxSweepBatch, func(c *Config) *int { return &c.Sweep.Batch })},
}

// applyEnv overrides c with every OCYPOD_* variable that is set and not
// empty. Errors name the variable.
func applyEnv(c *Config, getenv func(string) (string, bool)) error {
	for _, e := range envVars {
		v, ok := getenv(e.Name)
		if !ok || v == "" {
			continue
		}
		if err := e.apply(c, v); err != nil {
			return fmt.Errorf("%s: %w", e.Name, err)
		}
	}
	return nil
}

func boolVar(field func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("expected true or false, got %q", v)
		}
		*field(c) = b
		return nil
	}
}

func intVar(lo, hi int, field func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("expected an integer in %d..%d, got %q", lo, hi, v)
		}
		*field(c) = n
		return nil
	}
}

func durationVar(parse func(string) (time.Duration, error), field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := parse(v)
		if err != nil {
			return err
		}
		*field(c) = d
		return nil
	}
}
