package config

import (
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// checkRedisURL validates a Redis URL without ever echoing its credentials:
// url.Parse errors quote the input, so they are replaced by a fixed text.
// It returns nil, nil for an empty URL (embedded Redis).
func checkRedisURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" {
		return nil, fmt.Errorf("redis.url (OCYPOD_REDIS_URL) is not a valid URL (value not shown, it may hold a password); expected redis://[user:pass@]host[:port][/db], rediss://… or unix:///path")
	}
	switch u.Scheme {
	case "redis", "rediss":
		if u.Hostname() == "" {
			return nil, fmt.Errorf("redis.url (OCYPOD_REDIS_URL) %q has no host", redactURL(raw))
		}
		if u.Path != "" && u.Path != "/" && !dbPathRE.MatchString(u.Path) {
			return nil, fmt.Errorf("redis.url (OCYPOD_REDIS_URL) %q: the path must be a database number such as /0", redactURL(raw))
		}
	case "unix":
		if u.Path == "" {
			return nil, fmt.Errorf("redis.url (OCYPOD_REDIS_URL) %q has no socket path, expected unix:///path/to/redis.sock", redactURL(raw))
		}
	default:
		return nil, fmt.Errorf("redis.url (OCYPOD_REDIS_URL) %q: scheme must be redis, rediss or unix", redactURL(raw))
	}
	return u, nil
}

var (
	dbPathRE     = regexp.MustCompile(`^/[0-9]+$`)
	secretKeyRE  = regexp.MustCompile(`(?i)pass|pwd|auth|token|secret|cred|key`)
	safeSchemeRE = regexp.MustCompile(`^[a-z][a-z0-9+.-]{0,15}$`)
)

// redactURL shows a Redis URL with any user information replaced by
// REDACTED, and nothing that could be a misplaced password: paths that are
// neither a database number nor a socket path, query values whose keys look
// secret, and fragments are all hidden.
func redactURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || !safeSchemeRE.MatchString(u.Scheme) {
		return "(invalid URL)"
	}
	var b strings.Builder
	b.WriteString(u.Scheme + "://")
	if u.User != nil {
		b.WriteString("REDACTED@")
	}
	b.WriteString(u.Host)
	switch {
	case u.Path == "" || u.Path == "/" || dbPathRE.MatchString(u.Path):
		b.WriteString(u.Path)
	case u.Scheme == "unix" && !strings.ContainsAny(u.Path, "@:"):
		b.WriteString(u.Path)
	default:
		b.WriteString("/REDACTED")
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if secretKeyRE.MatchString(k) {
				q[k] = []string{"REDACTED"}
			}
		}
		b.WriteString("?" + q.Encode())
	}
	return ocypod.RedactSecrets(b.String())
}

// RedactedURL is the URL without credentials, for logs and messages.
func (r Redis) RedactedURL() string { return redactURL(r.URL) }

// String describes r with its URL redacted.
func (r Redis) String() string {
	return fmt.Sprintf("{url=%q key_namespace=%q cluster=%t pool_size=%d timeout=%s iam_user=%q cache_name=%q serverless=%t embedded_max_memory=%s partitions=%d scripts=%s}",
		r.RedactedURL(), r.KeyNamespace, r.ClusterMode, r.PoolSize, r.Timeout, r.IAMUser, r.CacheName, r.Serverless,
		FormatSize(r.EmbeddedMaxMemory), r.Partitions, r.Scripts)
}

// GoString keeps %#v from printing the raw URL.
func (r Redis) GoString() string { return "config.Redis" + r.String() }

// LogValue logs r with its URL redacted.
func (r Redis) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("url", r.RedactedURL()),
		slog.String("key_namespace", r.KeyNamespace),
		slog.Bool("cluster", r.ClusterMode),
		slog.Int("pool_size", r.PoolSize),
		slog.Duration("timeout", r.Timeout),
		slog.String("iam_user", r.IAMUser),
		slog.String("cache_name", r.CacheName),
		slog.Bool("serverless", r.Serverless),
		slog.String("embedded_max_memory", FormatSize(r.EmbeddedMaxMemory)),
		slog.Int("partitions", r.Partitions),
		slog.String("scripts", r.Scripts),
	)
}

// String describes c with the Redis URL redacted.
func (c Config) String() string {
	s := c.Server
	return fmt.Sprintf("server={host=%q port=%d max_body_size=%d timeout_check_interval=%s retry_check_interval=%s expiry_check_interval=%s shutdown_timeout=%s next_job_delay=%s log_level=%s allowed_hosts=%q worker_expiry=%s stats_history=%d max_long_polls=%d strict_input=%t} redis=%s sweep={budget=%s batch=%d} push={allowed_hosts=%q} queues=%q",
		s.Host, s.Port, s.MaxBodySize, s.TimeoutCheckInterval, s.RetryCheckInterval, s.ExpiryCheckInterval,
		s.ShutdownTimeout, s.NextJobDelay, LevelName(s.LogLevel), s.AllowedHosts, s.WorkerExpiry, s.StatsHistory, s.MaxLongPolls, s.StrictInput,
		c.Redis, c.Sweep.Budget, c.Sweep.Batch, c.Push.AllowedHosts, c.QueueNames())
}

// GoString keeps %#v from printing the raw URL.
func (c Config) GoString() string { return "config.Config{" + c.String() + "}" }

// LogValue logs c with the Redis URL redacted.
func (c Config) LogValue() slog.Value {
	s := c.Server
	return slog.GroupValue(
		slog.Group("server",
			slog.String("addr", s.Addr()),
			slog.Int64("max_body_size", s.MaxBodySize),
			slog.Duration("timeout_check_interval", s.TimeoutCheckInterval),
			slog.Duration("retry_check_interval", s.RetryCheckInterval),
			slog.Duration("expiry_check_interval", s.ExpiryCheckInterval),
			slog.Duration("shutdown_timeout", s.ShutdownTimeout),
			slog.Duration("next_job_delay", s.NextJobDelay),
			slog.String("log_level", LevelName(s.LogLevel)),
			slog.Any("allowed_hosts", s.AllowedHosts),
		),
		slog.Any("redis", c.Redis),
		slog.Group("sweep", slog.Duration("budget", c.Sweep.Budget), slog.Int("batch", c.Sweep.Batch)),
		slog.Group("push", slog.Any("allowed_hosts", c.Push.AllowedHosts)),
		slog.Any("queues", c.QueueNames()),
	)
}
