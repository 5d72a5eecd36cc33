// Command ocypod-import copies an upstream Ocypod 0.8 database into the
// store a configuration names (make import): queues, jobs in every status,
// the statistics and the id counter. The source is only read. An
// interrupted import continues where it stopped when run again.
//
//	ocypod-import -from redis://host:6379/0 [-from-namespace NS] [-config ocypod.toml] [-dry-run]
//
// The target is the configuration's Redis (redis.url, key_namespace,
// partitions, cluster and IAM settings), with the OCYPOD_* environment
// variables applied as the server applies them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/config"
	"github.com/ocyless/ocyless/shared/iamauth"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/release"
)

const program = "ocypod-import"

// minTimeout is the least Redis timeout of the import: one step writes a
// few hundred jobs in one script, more than a request does.
const minTimeout = 10 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	redisstore.RouteLogs(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	err := run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
	stop()
	var u usageError
	switch {
	case err == nil:
	case errors.As(err, &u):
		fmt.Fprintf(os.Stderr, "%s: %v\n", program, err)
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "%s: %v\n", program, err)
		os.Exit(1)
	}
}

// usageError is a problem with the command line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// run is the whole program: args without the program name, getenv the
// environment. The report goes to stdout, progress to stderr.
func run(ctx context.Context, args []string, getenv func(string) (string, bool), stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(program, flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "the upstream Ocypod's Redis: redis://[user:pass@]host[:port][/db], rediss://… or unix:///path (required)")
	fromNS := fs.String("from-namespace", "", "upstream's redis.key_namespace (empty: none)")
	cfgPath := fs.String("config", "", "the configuration file naming the target store (redis.url, key_namespace, partitions); OCYPOD_* variables apply on top")
	dryRun := fs.Bool("dry-run", false, "read and check everything, report what would be copied, write nothing")
	batch := fs.Int("batch", 500, "jobs copied per step (progress is recorded after each)")
	version := fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s -from URL [-from-namespace NS] [-config FILE] [-dry-run]\n\n"+
			"Copies an upstream Ocypod 0.8 database into the configured store. The source is only\n"+
			"read; an interrupted import continues where it stopped when run again.\n\n", program)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	if *version {
		_, err := fmt.Fprintf(stdout, "%s %s\n", program, release.Version)
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Sprintf("unexpected argument %q (see -h)", fs.Arg(0))}
	case *from == "":
		return usageError{"-from is required: the upstream Ocypod's Redis URL (see -h)"}
	case *batch < 1 || *batch > 10000:
		return usageError{"-batch must be 1 to 10000"}
	}
	cfg, err := config.Load(*cfgPath, getenv)
	if err != nil {
		return err
	}
	if cfg.Redis.URL == "" {
		return errors.New("the target store needs a Redis URL: set redis.url in the configuration (-config) or OCYPOD_REDIS_URL; the embedded Redis keeps nothing")
	}
	timeout := max(cfg.Redis.Timeout, minTimeout)
	srcName := config.Redis{URL: *from}.RedactedURL()
	src, err := redisstore.NewClient(redisstore.ClientOptions{URL: *from, DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout})
	if err != nil {
		return fmt.Errorf("-from: %w", err)
	}
	defer func() { _ = src.Close() }()
	dst, err := targetClient(cfg, getenv, timeout)
	if err != nil {
		return err
	}
	defer func() { _ = dst.Close() }()
	opts := redisstore.ConfigOptions(cfg)
	opts.OpTimeout = timeout
	store, err := redisstore.New(dst, opts)
	if err != nil {
		return err
	}
	var last time.Time
	rep, err := store.Import(ctx, redisstore.ImportOptions{
		Source: src, SourceNamespace: *fromNS, SourceName: srcName, DryRun: *dryRun, BatchSize: *batch,
		MaxValueSize: cfg.Server.MaxBodySize,
		Progress: func(done, total int) {
			if time.Since(last) >= 2*time.Second || done == total {
				last = time.Now()
				fmt.Fprintf(stderr, "%s: %d of %d jobs\n", program, done, total)
			}
		},
	})
	if rep != nil && (err == nil || rep.Copied > 0) {
		writeReport(stdout, rep, cfg.Redis, err == nil)
	}
	return err
}

// targetClient is the configured store's Redis client (with ElastiCache
// IAM auth when configured).
func targetClient(cfg config.Config, getenv func(string) (string, bool), timeout time.Duration) (redis.UniversalClient, error) {
	r := cfg.Redis
	o := redisstore.ClientOptions{URL: r.URL, ClusterMode: r.ClusterMode, PoolSize: r.PoolSize,
		DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout}
	if r.IAMUser != "" {
		p, err := iamauth.FromEnv(getenv, iamauth.Options{UserID: r.IAMUser, CacheName: r.CacheName, Serverless: r.Serverless})
		if err != nil {
			return nil, err
		}
		o.Credentials = p.Credentials
	}
	c, err := redisstore.NewClient(o)
	if err != nil {
		return nil, fmt.Errorf("redis.url: %w", err)
	}
	return c, nil
}
