package lambdamain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/ocyless/ocyless/shared/config"
	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// connsPerInvocation is the pool size per concurrent invocation: an
// invocation runs one Redis call at a time, plus one spare for a connection
// being replaced.
const connsPerInvocation = 2

// OpenStore checks the store's Redis at init (see redisstore.Open) and
// returns what Open found (info.Upgrade: an older layout, or an upgrade
// unfinished), checked false when Redis cannot be reached now: that is
// logged, not fatal (requests answer 503 until it is, and the layout is
// checked then).
func OpenStore(store *redisstore.Store, cfg config.Config, log *slog.Logger) (info redisstore.OpenInfo, checked bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Redis.Timeout)
	defer cancel()
	info, err = store.Open(ctx)
	switch {
	case err != nil && ocypod.ErrorKind(err) == ocypod.KindUnavailable:
		log.Warn("Redis not reachable at init; layout not checked yet", slog.String("error", ocypod.RedactSecrets(err.Error())))
		return info, false, nil
	case err != nil:
		return info, false, fmt.Errorf("store: %w", err)
	case info.Eviction == "":
		log.Debug("maxmemory-policy cannot be read here: not checked (it must be noeviction)")
	}
	return info, true, nil
}

// Setup reads the configuration from getenv and builds the store. The Redis
// client does not dial yet.
func Setup(getenv func(string) (string, bool), log *slog.Logger) (config.Config, *redisstore.Store, error) {
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return config.Config{}, nil, fmt.Errorf("configuration: %w", err)
	}
	if cfg.Redis.URL == "" {
		return config.Config{}, nil, errors.New("configuration: OCYPOD_REDIS_URL is required on Lambda")
	}
	opts := ClientOptions(cfg.Redis, lambdacontext.MaxConcurrency())
	if cfg.Redis.IAMUser != "" {
		if opts.Credentials, err = iamCredentials(cfg.Redis, getenv); err != nil {
			return config.Config{}, nil, fmt.Errorf("ElastiCache IAM auth: %w", err)
		}
	}
	client, err := redisstore.NewClient(opts)
	if err != nil {
		return config.Config{}, nil, fmt.Errorf("redis client: %w", err)
	}
	sopts := redisstore.ConfigOptions(cfg)
	sopts.Logger = log
	sopts.AutoPipeline = autoPipeline(lambdacontext.MaxConcurrency())
	store, err := redisstore.New(client, sopts)
	if err != nil {
		return config.Config{}, nil, fmt.Errorf("store: %w", err)
	}
	log.Debug("initialised", slog.String("redis", cfg.Redis.RedactedURL()),
		slog.Int("pool_size", opts.PoolSize), slog.Bool("iam_auth", cfg.Redis.IAMUser != ""))
	return cfg, store, nil
}

// ClientOptions returns the Redis client settings of a function that runs
// maxConcurrency invocations at once (1 except on Lambda Managed
// Instances): a pool of 2 per invocation unless the configuration sets
// one, and the configured timeout for dial, read and write (a zero timeout
// leaves redisstore.NewClient's default).
func ClientOptions(r config.Redis, maxConcurrency int) redisstore.ClientOptions {
	pool := r.PoolSize
	if pool <= 0 {
		pool = connsPerInvocation * max(maxConcurrency, 1)
	}
	return redisstore.ClientOptions{
		URL:          r.URL,
		ClusterMode:  r.ClusterMode,
		PoolSize:     pool,
		DialTimeout:  r.Timeout,
		ReadTimeout:  r.Timeout,
		WriteTimeout: r.Timeout,
	}
}

// autoPipeline is the store's automatic pipelining for a function that runs
// maxConcurrency invocations at once: off for one at a time (its calls are
// never concurrent, so it would only add a hand-over to each), the store's
// default otherwise (Lambda Managed Instances).
func autoPipeline(maxConcurrency int) int {
	if maxConcurrency <= 1 {
		return -1
	}
	return 0
}

// orDiscard returns log, or a logger that discards everything if it is nil.
func orDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}
