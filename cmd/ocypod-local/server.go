package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/ocyless/ocyless/shared/config"
	"github.com/ocyless/ocyless/shared/dispatch"
	"github.com/ocyless/ocyless/shared/httpapi"
	"github.com/ocyless/ocyless/shared/iamauth"
	"github.com/ocyless/ocyless/shared/metrics"
	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/push"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/sweep"
)

// HTTP server limits. Ocypod's API has small JSON bodies; the write timeout
// leaves room for next_job_delay.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = time.Minute
	writeTimeout      = time.Minute
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
	startupTimeout    = 30 * time.Second // queue creation at start
)

// startError is a startup failure with Ocypod's wording: "<msg>: <cause>".
// The cause's text is redacted: it may come from a Redis URL.
type startError struct {
	msg string
	err error
}

func (e *startError) Error() string { return e.msg + ": " + ocypod.RedactSecrets(e.err.Error()) }
func (e *startError) Unwrap() error { return e.err }

// newLogger returns the text logger on w at level, naming LevelTrace
// "TRACE". The renaming (of the line's level; no attribute of ours is
// keyed "level") is installed only when trace records can pass
// level: a ReplaceAttr function, even one that changes nothing, makes the
// handler call it for every attribute of every line (time, level, message
// included) and allocate, about half the cost of a job event's line.
func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if level <= config.LevelTrace {
		opts.ReplaceAttr = traceName
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// traceName names the levels at or below LevelTrace "TRACE".
func traceName(groups []string, a slog.Attr) slog.Attr {
	if a.Key == slog.LevelKey && len(groups) == 0 {
		if l, ok := a.Value.Any().(slog.Level); ok && l <= config.LevelTrace {
			a.Value = slog.StringValue("TRACE")
		}
	}
	return a
}

// serve runs the server for cfg until ctx is cancelled, then shuts it down
// gracefully and returns nil. path is the configuration file ("" if none).
func serve(ctx context.Context, cfg config.Config, path string, getenv func(string) (string, bool), stderr io.Writer, h hooks) error {
	log := newLogger(stderr, cfg.Server.LogLevel)
	if _, set := getenv("GOGC"); !set && cfg.Redis.URL != "" {
		// The heap of a server in front of an external Redis is small and
		// short-lived: collecting at 5x the live heap instead of 2x saves
		// about a tenth of its CPU per request. The embedded miniredis keeps
		// the default, its data being the live heap.
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	if path == "" {
		log.Info("No config file given, using the defaults and OCYPOD_* environment variables")
	}
	client, closeRedis, err := openRedis(cfg, getenv, log)
	if err != nil {
		return err
	}
	defer closeRedis()
	opts := redisstore.ConfigOptions(cfg)
	opts.Logger = log
	if cfg.Redis.URL == "" {
		opts.Admit = newMemoryBound(cfg.Redis.EmbeddedMaxMemory).admit
	}
	store, err := redisstore.New(client, opts)
	if err != nil {
		return &startError{"Failed to initialise Redis connection pool", err}
	}
	if h.opened != nil {
		h.opened(store, client)
	}
	if err := openStore(ctx, store, cfg, log); err != nil {
		return err
	}
	if err := initQueues(ctx, store, cfg, log); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Server.Addr())
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	log.Info("Starting queue server at: " + addr)
	apiOpts := httpapi.ConfigOptions(cfg.Server)
	apiOpts.Logger = log
	pushPolicy, err := push.NewPolicy(cfg.Push.AllowedHosts, push.Local)
	if err != nil {
		_ = ln.Close()
		return &startError{"Invalid push configuration", err}
	}
	apiOpts.PushPolicy = pushPolicy
	api := httpapi.New(store, apiOpts)
	sweeps := metrics.NewSweeps()
	// A layout not checked at start (Redis unreachable then) is checked at
	// each request until it is: an unfinished upgrade gets a 503.
	routes := withMetrics(api.Gate(api.Handler(), store.Servable), metrics.NewHandler(store, sweeps, cfg.Redis.Timeout, log))
	handler := accessLog(newHostGuard(cfg.Server, ln.Addr(), routes, log), log)
	if h.request != nil {
		handler = observed(handler, h.request)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout + cfg.Server.NextJobDelay,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	sweepCtx, stopSweeps := context.WithCancel(ctx)
	var loops sync.WaitGroup
	for _, k := range sweep.Kinds {
		every := interval(cfg.Server, k)
		log.Info(fmt.Sprintf("Checking job %s every %s", k, ocypod.FromStd(every)))
		loops.Go(func() { sweepLoop(sweepCtx, store, k, every, cfg.Sweep.Budget, sweeps, log) })
	}
	// Push delivery: the jobs of push queues are delivered from inside
	// this process, each queue woken by its creates.
	deliverer := push.New(push.Options{Policy: pushPolicy, Logger: log})
	defer deliverer.Close()
	disp := dispatch.New(store, dispatch.Options{Deliverer: deliverer, Logger: log,
		NotPush: func(err error) bool { return errors.Is(err, redisstore.ErrNotPush) }})
	store.OnQueueChange(disp.Changed)
	disp.Start()
	if h.listening != nil {
		h.listening(addr)
	}

	select {
	case err = <-served: // the listener failed
		stopSweeps()
		loops.Wait()
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Server.ShutdownTimeout)
		_ = disp.Close(dctx)
		cancel()
		return err
	case <-ctx.Done():
	}
	log.Info("Shutting down", slog.Duration("timeout", cfg.Server.ShutdownTimeout))
	api.Drain() // long-polls answer now: nothing holds the shutdown
	stopSweeps()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Server.ShutdownTimeout)
	defer cancel()
	if h.force != nil {
		go func() {
			select {
			case <-h.force:
				log.Warn("Second signal: stopping now")
				cancel()
			case <-sctx.Done():
			}
		}()
	}
	// Deliveries in flight finish and are recorded, within the same
	// shutdown_timeout as the requests.
	dispClosed := make(chan error, 1)
	go func() { dispClosed <- disp.Close(sctx) }()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("Requests still running at the end of shutdown_timeout were cut off", slog.String("error", err.Error()))
		_ = srv.Close()
	}
	if err := <-dispClosed; err != nil {
		log.Warn("Push deliveries still under way at the end of shutdown_timeout were cancelled; their jobs are retried after their timeout")
	}
	loops.Wait()
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("Stopped")
	return nil
}

// openRedis returns the Redis client of cfg (with ElastiCache IAM auth when
// configured), or of an embedded miniredis when no URL is configured, and
// the function that closes them.
func openRedis(cfg config.Config, getenv func(string) (string, bool), log *slog.Logger) (redis.UniversalClient, func(), error) {
	r := cfg.Redis
	if r.URL == "" {
		client, closeMini := embeddedRedis(r)
		log.Warn("No Redis URL configured: using an embedded miniredis, data is kept in memory only and lost on exit",
			slog.String("embedded_max_memory", config.FormatSize(r.EmbeddedMaxMemory)))
		return client, closeMini, nil
	}
	opts := redisstore.ClientOptions{
		URL: r.URL, ClusterMode: r.ClusterMode, PoolSize: r.PoolSize,
		DialTimeout: r.Timeout, ReadTimeout: r.Timeout, WriteTimeout: r.Timeout,
	}
	if r.IAMUser != "" {
		p, err := iamauth.FromEnv(getenv, iamauth.Options{UserID: r.IAMUser, CacheName: r.CacheName, Serverless: r.Serverless})
		if err != nil {
			return nil, nil, &startError{"Failed to initialise Redis connection pool", err}
		}
		opts.Credentials = p.Credentials
	}
	log.Info("Using Redis", slog.Any("redis", r))
	client, err := redisstore.NewClient(opts)
	if err != nil {
		return nil, nil, &startError{"Failed to initialise Redis connection pool", err}
	}
	return client, func() { _ = client.Close() }, nil
}

// embeddedRedis starts a miniredis that only this process can reach: it
// has no listening socket, and each client connection is one end of an
// in-memory pipe whose other end miniredis serves. Client settings follow
// redisstore.NewClient's (no command retries, no CLIENT SETINFO).
func embeddedRedis(r config.Redis) (redis.UniversalClient, func()) {
	m := miniredis.NewMiniRedis()
	client := redis.NewClient(&redis.Options{
		Dialer: func(context.Context, string, string) (net.Conn, error) {
			c, err := m.Dial()
			if err != nil {
				return nil, err
			}
			return newAsyncConn(c), nil
		},
		PoolSize:                 r.PoolSize,
		DialTimeout:              r.Timeout,
		ReadTimeout:              r.Timeout,
		WriteTimeout:             r.Timeout,
		ContextTimeoutEnabled:    true,
		MaxRetries:               -1,
		DialerRetries:            1,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	return client, func() { _ = client.Close(); m.Close() }
}

// upgradeOnly upgrades the configured namespace's older layout (make
// migrate), or waits for the process upgrading it, and returns nil once the
// namespace has this version's layout (at once if it had); an error if the
// upgrade cannot finish.
func upgradeOnly(ctx context.Context, cfg config.Config, getenv func(string) (string, bool), stderr io.Writer) error {
	log := newLogger(stderr, cfg.Server.LogLevel)
	if cfg.Redis.URL == "" {
		return errors.New("error: --upgrade needs a Redis URL (redis.url or OCYPOD_REDIS_URL)")
	}
	client, closeRedis, err := openRedis(cfg, getenv, log)
	if err != nil {
		return err
	}
	defer closeRedis()
	opts := redisstore.ConfigOptions(cfg)
	opts.Logger = log
	store, err := redisstore.New(client, opts)
	if err != nil {
		return &startError{"Failed to initialise Redis connection pool", err}
	}
	info, err := store.Open(ctx)
	if err != nil {
		return &startError{"Failed to open the store", err}
	}
	if !info.Upgrade {
		log.Info("Nothing to upgrade: the namespace has this version's layout", slog.String("namespace", cfg.Redis.KeyNamespace))
		return nil
	}
	if err := upgrade(ctx, store, info, cfg, log, "run it again to resume"); err != nil {
		return err
	}
	log.Info("Upgrade finished: the namespace has this version's layout", slog.String("namespace", cfg.Redis.KeyNamespace))
	return nil
}

// upgrade brings the namespace that Open reported in info up to this
// version's layout: it works, or waits for the process that holds the
// upgrade lock and takes over if that one stops, until the upgrade is
// done or ctx ends. It returns a startError unless the upgrade is done:
// nothing may serve an unfinished upgrade. again says how to resume.
func upgrade(ctx context.Context, store *redisstore.Store, info redisstore.OpenInfo, cfg config.Config, log *slog.Logger, again string) error {
	ns := slog.String("namespace", cfg.Redis.KeyNamespace)
	if info.Upgrading {
		log.Info("Another process is upgrading the namespace's layout: waiting for it to finish, or to take over if it stops",
			ns, slog.Int("layout", info.Layout))
	} else {
		log.Info("The namespace has an older layout: upgrading it", ns, slog.Int("layout", info.Layout))
	}
	done, err := store.Upgrade(ctx, 0)
	switch {
	case err != nil:
		return &startError{"Failed to upgrade the namespace's layout (" + again + ")", err}
	case !done:
		return &startError{"Failed to upgrade the namespace's layout (" + again + ")", errors.New("the upgrade is unfinished")}
	}
	return nil
}

// openStore checks the store's Redis (layout, partitions, eviction policy)
// and upgrades a namespace of an older layout before anything else
// touches it (or waits for the process upgrading it, see upgrade). A Redis
// that cannot be reached yet is only a warning: requests answer 503 until
// it is (and while its namespace's upgrade is unfinished, see httpapi's Gate).
func openStore(ctx context.Context, store *redisstore.Store, cfg config.Config, log *slog.Logger) error {
	octx, cancel := context.WithTimeout(ctx, cfg.Redis.Timeout+time.Second)
	info, err := store.Open(octx)
	cancel()
	switch {
	case err != nil && ocypod.ErrorKind(err) == ocypod.KindUnavailable:
		log.Warn("Redis is not reachable yet; requests fail with 503 until it is",
			slog.String("redis", cfg.Redis.RedactedURL()), slog.String("error", ocypod.RedactSecrets(err.Error())))
		return nil
	case err != nil:
		return &startError{"Failed to open the store", err}
	case info.Eviction == "" && cfg.Redis.URL != "":
		log.Warn("Redis does not let us read maxmemory-policy: not checked; it must be noeviction, or jobs may be lost")
	}
	if !info.Upgrade {
		return nil
	}
	return upgrade(ctx, store, info, cfg, log, "start again to resume")
}

// initQueues creates the configured queues that are missing and resets
// those whose stored settings differ. Queues not in the configuration are
// left alone, as Ocypod does.
func initQueues(ctx context.Context, store *redisstore.Store, cfg config.Config, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, startupTimeout)
	defer cancel()
	for _, name := range cfg.QueueNames() {
		want := cfg.Queues[name]
		have, err := store.GetQueue(ctx, name)
		switch {
		case err == nil && sameSettings(have, want):
			log.Debug("Queue settings up to date", slog.String("queue", name))
			continue
		case err != nil && ocypod.ErrorKind(err) != ocypod.KindNotFound:
			return &startError{"Failed to initialise queues from configuration file", err}
		}
		created, err := store.PutQueue(ctx, name, want)
		if err != nil {
			return &startError{"Failed to initialise queues from configuration file", err}
		}
		what := "updated"
		if created {
			what = "created"
		}
		log.Info("Queue "+what+" from configuration", slog.String("queue", name))
	}
	return nil
}

// sameSettings compares queue settings, treating nil and empty retry delays
// alike.
func sameSettings(a, b ocypod.QueueSettings) bool {
	return a.Timeout == b.Timeout && a.HeartbeatTimeout == b.HeartbeatTimeout && a.ExpiresAfter == b.ExpiresAfter &&
		a.Retries == b.Retries && slices.Equal(a.RetryDelays, b.RetryDelays)
}

// interval is the configured period of sweep k.
func interval(s config.Server, k sweep.Kind) time.Duration {
	switch k {
	case sweep.Timeouts:
		return s.TimeoutCheckInterval
	case sweep.Retries:
		return s.RetryCheckInterval
	case sweep.Schedules:
		// Recurring jobs fire on the second (takes see scheduled jobs
		// without this sweep).
		return time.Second
	case sweep.Outbox:
		// The request applies its effects itself; this only catches what
		// a failure left behind.
		return 10 * time.Second
	}
	return s.ExpiryCheckInterval
}

// sweepLoop runs sweep k at once and then every period until ctx ends, as
// Ocypod's monitors do. Each pass may take at most budget and is recorded
// in rec; failures are logged and the next tick tries again.
func sweepLoop(ctx context.Context, store *redisstore.Store, k sweep.Kind, every, budget time.Duration, rec *metrics.Sweeps, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	warned := false
	for {
		pctx, cancel := context.WithTimeout(ctx, budget)
		// A layout not checked at start (Redis unreachable then) is checked
		// before each pass until it is: no sweep of an unfinished upgrade.
		// (Redis unreachable: no pass either, the next tick asks again.)
		if ok, err := store.Servable(pctx); err != nil || !ok {
			cancel()
			if err == nil && !warned {
				warned = true
				log.Warn("The namespace's layout upgrade is unfinished: job "+string(k)+" monitoring waits for it",
					slog.String("sweep", string(k)))
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				continue
			}
		}
		start := time.Now()
		tot, err := sweep.Once(pctx, store, k, log)
		took := time.Since(start)
		cancel()
		if ctx.Err() == nil { // a pass cut short by shutdown is not a failure
			rec.Observe(k, took, tot, err)
		}
		if err != nil && ctx.Err() == nil {
			log.Error("Job "+string(k)+" monitoring failed",
				slog.String("sweep", string(k)), slog.String("error", ocypod.RedactSecrets(err.Error())))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// metricsPath is where the local server serves its metrics; the API has
// no route there.
const metricsPath = "/metrics"

// withMetrics serves metricsPath with m and everything else with api,
// except that GET /ui/ redirects to the dashboard's route, /ui (a route
// cannot end with a slash on API Gateway, but people type one).
func withMetrics(api, m http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == metricsPath:
			m.ServeHTTP(w, r)
		case r.URL.Path == "/ui/" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
			http.Redirect(w, r, "/ui", http.StatusPermanentRedirect)
		default:
			api.ServeHTTP(w, r)
		}
	})
}

// accessLog logs every request at debug level (Ocypod logs none).
func accessLog(next http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !log.Enabled(r.Context(), slog.LevelDebug) {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		log.DebugContext(r.Context(), "request", slog.String("method", r.Method), slog.String("path", r.URL.EscapedPath()),
			slog.Int("status", sw.status), slog.Duration("duration", time.Since(start)))
	})
}

// observed calls seen with each request before next serves it.
func observed(next http.Handler, seen func(*http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen(r)
		next.ServeHTTP(w, r)
	})
}

// statusWriter records the status code of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
