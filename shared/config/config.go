// Package config reads the server's configuration: Ocypod's TOML file format
// (with ${VAR} and ${VAR=default} interpolation) for the local server, and
// OCYPOD_* environment variables, which override the file and are the only
// source on Lambda.
//
// The result is one typed, validated Config. No error text and no String or
// LogValue output ever contains a Redis password or token: URLs are shown
// with their user information removed.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Config is the whole configuration, validated.
type Config struct {
	Server Server
	Redis  Redis
	Sweep  Sweep
	Push   Push
	// Queues are created (or their settings reset) at start, like Ocypod's
	// [queue.<name>] sections. Durations are whole seconds, as stored.
	Queues map[string]ocypod.QueueSettings
}

// Server configures HTTP and the sweeps.
type Server struct {
	Host                 string        // default 127.0.0.1
	Port                 uint16        // default 8023; 0 picks a free port
	Threads              int           // accepted for compatibility and ignored; 0 if unset
	MaxBodySize          int64         // bytes; default 256 KiB (DefaultMaxBodySize)
	TimeoutCheckInterval time.Duration // default 30s; > 0
	RetryCheckInterval   time.Duration // default 60s; > 0
	ExpiryCheckInterval  time.Duration // default 5m; > 0
	ShutdownTimeout      time.Duration // default 30s; whole seconds, at most 65535s
	NextJobDelay         time.Duration // default 0
	LogLevel             slog.Level    // default info
	WorkerExpiry         time.Duration // workers are listed this long after they last took a job; default 1h
	StatsHistory         int           // days of per-queue statistics kept; default 30
	// MaxLongPolls is the most takes that wait (?wait=) at once in one
	// process; past it a take answers at once. Default 1000.
	MaxLongPolls int
	// StrictInput refuses unknown body keys and query parameters in pure
	// Ocypod requests too (requests using the extensions always refuse
	// them). Default false: Ocypod's silence.
	StrictInput bool
	// AllowedHosts are the Host header values (and Origin hosts) the local
	// server answers, canonical (see HostPort); an entry without a port
	// matches any port. Empty: LoopbackHosts when listening on a loopback
	// address, no Host check otherwise.
	AllowedHosts []string
}

// Push configures push delivery and callbacks (the contract's §10–§11).
type Push struct {
	// AllowedHosts are the hosts push and callback targets may name
	// ("host" or "host:port", canonical as server.allowed_hosts). Empty:
	// loopback only in the local server, none on AWS.
	AllowedHosts []string
}

// Redis configures the store's connection.
type Redis struct {
	URL          string // empty: the local server embeds miniredis
	KeyNamespace string // hash tag of every key; empty means the store's default
	ClusterMode  bool
	PoolSize     int           // 0 means the client's default
	Timeout      time.Duration // dial/read/write timeout; default 2s
	// IAMUser enables ElastiCache IAM auth as this user (user id = name).
	IAMUser string
	// CacheName is the replication group id or serverless cache name the IAM
	// token is signed for.
	CacheName  string
	Serverless bool // the cache is ElastiCache Serverless
	// EmbeddedMaxMemory bounds the local server's live heap, in bytes, when
	// it runs the embedded miniredis: past it, creating jobs and writing
	// outputs answer 507. Default 512 MiB.
	EmbeddedMaxMemory int64
	// Partitions is how many partitions (hash tags, so cluster slots) the
	// namespace's data spreads over: 1 to 1024, default 1. It cannot change
	// once the namespace holds data.
	Partitions int
	// Scripts is how the store runs its scripts: "auto" (Redis Functions
	// where the server has them, else EVALSHA), "functions" or "eval".
	// Default "auto", "eval" for ElastiCache Serverless.
	Scripts string
}

// Sweep configures the scheduled sweeper Lambdas.
type Sweep struct {
	// Budget is how long one sweeper invocation may keep sweeping before it
	// returns (the rest waits for the next schedule). Default 50s.
	Budget time.Duration
	// Batch is the most jobs one sweep call handles. Default 100.
	Batch int
}

// Defaults that differ from zero values.
const (
	DefaultHost                 = "127.0.0.1"
	DefaultPort                 = 8023
	DefaultMaxBodySize          = 256 << 10 // upstream Ocypod: 1024 bytes, too small for real outputs
	DefaultTimeoutCheckInterval = 30 * time.Second
	DefaultRetryCheckInterval   = 60 * time.Second
	DefaultExpiryCheckInterval  = 5 * time.Minute
	DefaultShutdownTimeout      = 30 * time.Second
	DefaultRedisTimeout         = 2 * time.Second
	DefaultSweepBudget          = 50 * time.Second
	DefaultSweepBatch           = 100
	DefaultWorkerExpiry         = time.Hour
	DefaultStatsHistory         = 30
	DefaultMaxLongPolls         = 1000
	// MaxLongPollsLimit bounds server.max_long_polls.
	MaxLongPollsLimit = 1_000_000
	// MaxPartitions bounds redis.partitions (and a queue's shards).
	MaxPartitions            = 1024
	DefaultEmbeddedMaxMemory = 512 << 20

	// MaxShutdownTimeout is Ocypod's limit on server.shutdown_timeout.
	MaxShutdownTimeout = 65535 * time.Second
	// MaxSweepBatch bounds OCYPOD_SWEEP_BATCH: one sweep call is one script,
	// and a huge batch would block Redis.
	MaxSweepBatch = 10_000
	// MinEmbeddedMaxMemory is the smallest redis.embedded_max_memory: the
	// server itself needs a few MiB before it stores anything.
	MinEmbeddedMaxMemory = 1 << 20
)

// Default returns the built-in defaults.
func Default() Config {
	return Config{
		Server: Server{
			Host:                 DefaultHost,
			Port:                 DefaultPort,
			MaxBodySize:          DefaultMaxBodySize,
			TimeoutCheckInterval: DefaultTimeoutCheckInterval,
			RetryCheckInterval:   DefaultRetryCheckInterval,
			ExpiryCheckInterval:  DefaultExpiryCheckInterval,
			ShutdownTimeout:      DefaultShutdownTimeout,
			LogLevel:             slog.LevelInfo,
			WorkerExpiry:         DefaultWorkerExpiry,
			StatsHistory:         DefaultStatsHistory,
			MaxLongPolls:         DefaultMaxLongPolls,
		},
		Redis: Redis{Timeout: DefaultRedisTimeout, EmbeddedMaxMemory: DefaultEmbeddedMaxMemory, Partitions: 1, Scripts: "auto"},
		Sweep: Sweep{Budget: DefaultSweepBudget, Batch: DefaultSweepBatch},
	}
}

// FileError is a configuration file that cannot be read or parsed. Its text
// is Ocypod's: "Failed to parse config file <path>: <msg>".
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string {
	return fmt.Sprintf("Failed to parse config file %s: %v", e.Path, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// upstreamError is an error whose text is Ocypod's, capitals included.
type upstreamError string

func (e upstreamError) Error() string { return string(e) }

// Load reads the TOML file at path (none if path is empty), then applies
// OCYPOD_* variables from getenv, then validates. getenv is also the source
// of ${VAR} interpolation in the file; nil means an empty environment.
// File problems are *FileError; the other errors name the offending field
// or variable.
func Load(path string, getenv func(string) (string, bool)) (Config, error) {
	if getenv == nil {
		getenv = noEnv
	}
	c := Default()
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the path is already in the message
			}
			return Config{}, &FileError{Path: path, Err: err}
		}
		if c, err = parse(data, getenv); err != nil {
			return Config{}, &FileError{Path: path, Err: err}
		}
	}
	return withEnv(c, getenv)
}

// FromEnv is Load without a file: the Lambda configuration. It does not
// reach the TOML decoder, which keeps it out of the Lambda binaries.
func FromEnv(getenv func(string) (string, bool)) (Config, error) {
	if getenv == nil {
		getenv = noEnv
	}
	return withEnv(Default(), getenv)
}

// withEnv applies the OCYPOD_* variables to c and validates the result.
func withEnv(c Config, getenv func(string) (string, bool)) (Config, error) {
	if err := applyEnv(&c, getenv); err != nil {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Parse reads a configuration file's content: ${VAR} interpolation from
// getenv, then Ocypod's TOML format on top of the defaults, then Validate.
// OCYPOD_* variables are not applied (Load does that).
func Parse(data []byte, getenv func(string) (string, bool)) (Config, error) {
	if getenv == nil {
		getenv = noEnv
	}
	c, err := parse(data, getenv)
	if err != nil {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

func noEnv(string) (string, bool) { return "", false }

// parse interpolates and decodes data onto the defaults, without validation.
func parse(data []byte, getenv func(string) (string, bool)) (Config, error) {
	text, err := Interpolate(string(data), getenv)
	if err != nil {
		return Config{}, err
	}
	c := Default()
	if err := decodeTOML(text, &c); err != nil {
		return Config{}, err
	}
	return c, nil
}

var namespaceRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{0,64}$`)

// ValidNamespace reports whether ns can be redis.key_namespace: at most 64
// of [A-Za-z0-9_.-], characters that can never close a Redis Cluster hash
// tag; empty means the store's default.
func ValidNamespace(ns string) bool { return namespaceRE.MatchString(ns) }

// Validate checks the whole configuration. Each error names the file key and
// the environment variable that set the offending value.
func (c Config) Validate() error {
	s := c.Server
	for _, iv := range []struct {
		key, env string
		d        time.Duration
	}{
		{"server.timeout_check_interval", "OCYPOD_TIMEOUT_CHECK_INTERVAL", s.TimeoutCheckInterval},
		{"server.retry_check_interval", "OCYPOD_RETRY_CHECK_INTERVAL", s.RetryCheckInterval},
		{"server.expiry_check_interval", "OCYPOD_EXPIRY_CHECK_INTERVAL", s.ExpiryCheckInterval},
	} {
		if iv.d <= 0 {
			return fmt.Errorf("%s (%s) must be greater than zero, got %s", iv.key, iv.env, iv.d)
		}
	}
	if s.ShutdownTimeout > MaxShutdownTimeout {
		return upstreamError("Maximum shutdown_timeout is 65535 seconds")
	}
	if s.ShutdownTimeout < 0 || s.NextJobDelay < 0 {
		return errors.New("server.shutdown_timeout and server.next_job_delay cannot be negative")
	}
	if s.MaxBodySize <= 0 {
		return fmt.Errorf("server.max_body_size (OCYPOD_MAX_BODY_SIZE) must be greater than zero, got %d", s.MaxBodySize)
	}
	if s.Threads < 0 {
		return fmt.Errorf("server.threads cannot be negative, got %d", s.Threads)
	}
	if s.WorkerExpiry <= 0 {
		return fmt.Errorf("server.worker_expiry (OCYPOD_WORKER_EXPIRY) must be greater than zero, got %s", s.WorkerExpiry)
	}
	if s.StatsHistory < 1 || s.StatsHistory > 3650 {
		return fmt.Errorf("server.stats_history (OCYPOD_STATS_HISTORY) must be 1 to 3650 days, got %d", s.StatsHistory)
	}
	if s.MaxLongPolls < 1 || s.MaxLongPolls > MaxLongPollsLimit {
		return fmt.Errorf("server.max_long_polls (OCYPOD_MAX_LONG_POLLS) must be 1 to %d, got %d", MaxLongPollsLimit, s.MaxLongPolls)
	}
	for i, h := range s.AllowedHosts {
		if p, err := ParseHostPort(h); err != nil || p.String() != h {
			return fmt.Errorf("server.allowed_hosts (OCYPOD_ALLOWED_HOSTS): entry %d %q is not a canonical host[:port]", i+1, h)
		}
	}
	if err := c.Redis.validate(); err != nil {
		return err
	}
	if c.Sweep.Budget <= 0 {
		return fmt.Errorf("sweep.budget (OCYPOD_SWEEP_BUDGET) must be greater than zero, got %s", c.Sweep.Budget)
	}
	if c.Sweep.Batch < 1 || c.Sweep.Batch > MaxSweepBatch {
		return fmt.Errorf("sweep.batch (OCYPOD_SWEEP_BATCH) must be between 1 and %d, got %d", MaxSweepBatch, c.Sweep.Batch)
	}
	for _, name := range c.QueueNames() {
		if !ocypod.ValidQueueName(name) {
			return fmt.Errorf("[queue.%q]: Invalid queue name, valid characters: a-zA-Z0-9_.-", name)
		}
	}
	return nil
}

func (r Redis) validate() error {
	if !ValidNamespace(r.KeyNamespace) {
		return fmt.Errorf("redis.key_namespace (OCYPOD_KEY_NAMESPACE) %q is invalid: at most 64 characters among a-zA-Z0-9_.-", r.KeyNamespace)
	}
	if r.PoolSize < 0 {
		return fmt.Errorf("redis.pool_size (OCYPOD_REDIS_POOL_SIZE) cannot be negative, got %d", r.PoolSize)
	}
	if r.Partitions < 1 || r.Partitions > MaxPartitions {
		return fmt.Errorf("redis.partitions (OCYPOD_PARTITIONS) must be 1 to %d, got %d", MaxPartitions, r.Partitions)
	}
	switch r.Scripts {
	case "auto", "functions", "eval":
	default:
		return fmt.Errorf("redis.scripts (OCYPOD_REDIS_SCRIPTS) must be auto, functions or eval, got %q", r.Scripts)
	}
	if r.Timeout <= 0 {
		return fmt.Errorf("redis.timeout (OCYPOD_REDIS_TIMEOUT) must be greater than zero, got %s", r.Timeout)
	}
	if r.EmbeddedMaxMemory < MinEmbeddedMaxMemory {
		return fmt.Errorf("redis.embedded_max_memory (OCYPOD_EMBEDDED_MAX_MEMORY) must be at least 1MiB, got %s", FormatSize(r.EmbeddedMaxMemory))
	}
	u, err := checkRedisURL(r.URL)
	if err != nil {
		return err
	}
	if r.IAMUser == "" {
		return nil
	}
	switch {
	case u == nil || u.Scheme != "rediss":
		return fmt.Errorf("redis.iam_user (OCYPOD_REDIS_IAM_USER) needs a TLS URL rediss://host:port in redis.url (OCYPOD_REDIS_URL), got %q", r.RedactedURL())
	case u.User != nil:
		if _, hasPass := u.User.Password(); hasPass {
			return errors.New("redis.iam_user (OCYPOD_REDIS_IAM_USER) conflicts with the password in redis.url (OCYPOD_REDIS_URL): the IAM token is the password")
		}
	}
	if r.CacheName == "" {
		return errors.New("redis.iam_user (OCYPOD_REDIS_IAM_USER) needs redis.cache_name (OCYPOD_REDIS_CACHE_NAME): the replication group id or serverless cache name")
	}
	if strings.ContainsAny(r.IAMUser, " \t\r\n") || strings.ContainsAny(r.CacheName, " \t\r\n/") {
		return errors.New("redis.iam_user and redis.cache_name (OCYPOD_REDIS_IAM_USER, OCYPOD_REDIS_CACHE_NAME) cannot contain spaces or '/'")
	}
	return nil
}

// QueueNames returns the configured queue names, sorted.
func (c Config) QueueNames() []string {
	names := make([]string, 0, len(c.Queues))
	for n := range c.Queues {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Addr is host:port for net.Listen (IPv6 hosts get brackets).
func (s Server) Addr() string {
	host := s.Host
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	return fmt.Sprintf("%s:%d", host, s.Port)
}
