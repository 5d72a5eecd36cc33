package redisstore

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"reflect"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// ClientOptions configure the connection to Redis.
type ClientOptions struct {
	// URL is redis://[user:pass@]host[:port][/db], rediss:// for TLS, or
	// unix:///path/to/socket.
	URL string
	// ClusterMode selects a cluster client for a cluster configuration
	// endpoint (ElastiCache cluster mode, ElastiCache Serverless).
	ClusterMode bool
	// PoolSize is the most connections kept; 0 means go-redis's default.
	PoolSize int
	// DialTimeout, ReadTimeout and WriteTimeout bound each Redis call, so an
	// unreachable Redis turns into a 503 quickly. 0 means 2s. The read
	// timeout is also every command's whole budget: waiting for a pooled
	// connection, dialing, writing and reading together (see NewClient).
	DialTimeout, ReadTimeout, WriteTimeout time.Duration
	// Credentials, when set, supplies the user name and password for every
	// new connection (e.g. a freshly signed ElastiCache IAM token).
	Credentials func(ctx context.Context) (username, password string, err error)
}

// defaultTimeout bounds dials, reads and writes when ClientOptions leave
// them zero.
const defaultTimeout = 2 * time.Second

// dialAttempts is how many times a connection is dialed before a command
// fails: with Redis down, a request answers 503 after one dial timeout
// instead of five back-to-back attempts.
const dialAttempts = 1

// Pooled connections are closed after 4 idle minutes (a frozen Lambda's
// sockets go stale) and after an hour at most (ElastiCache drops IAM-
// authenticated connections after 12 hours).
const (
	connMaxIdle     = 4 * time.Minute
	connMaxLifetime = time.Hour
)

// NewClient returns a Redis client for o: a cluster client when
// o.ClusterMode is set, a single-node client otherwise, both built from one
// redis.UniversalOptions (see settings). It does not dial: the first command
// does, so building it at Lambda init costs nothing.
//
// Settings: dial, read and write timeouts from o, else from the URL's
// query (dial_timeout=...), else 2s; the context's deadline honoured, and
// every command given a deadline of the read timeout in all (a hook), and
// the wait for a pooled connection bounded by it too, so that under
// concurrency a request still fails within that budget instead of queueing
// for a connection first and then timing out its own read; no command
// retries (scripts are not idempotent; go-redis still checks a
// pooled connection before reusing it); no CLIENT SETINFO and no
// maintenance notifications (managed Redis rejects them); TLS 1.2 or later
// for rediss://. The error for a bad URL never contains its credentials.
// The URL's other query settings (pool_size=, min_idle_conns=...) apply as
// go-redis parses them, unless a setting above overrides them.
func NewClient(o ClientOptions) (redis.UniversalClient, error) {
	u, err := parseURL(o.URL, o.ClusterMode)
	if err != nil {
		return nil, err
	}
	settings(u, o)
	return newClient(u), nil
}

// newClient builds the client of u with the store's hooks.
func newClient(u *redis.UniversalOptions) redis.UniversalClient {
	c := redis.NewUniversalClient(u)
	if cc, ok := c.(*redis.ClusterClient); ok {
		cc.OnNewNode(func(node *redis.Client) { node.AddHook(noResendHook{}) })
	}
	c.AddHook(deadlineHook{u.ReadTimeout})
	return c
}

// parseURL reads a Redis URL into UniversalOptions: with go-redis's own
// parser for the mode (ParseClusterURL accepts several addr= seeds and no
// database or unix socket; ParseURL one address), then every field of the
// parsed options carried over by name (fromParsed). IsClusterMode is set
// in cluster mode, so that one configuration endpoint still makes a
// cluster client.
func parseURL(raw string, cluster bool) (*redis.UniversalOptions, error) {
	if raw == "" {
		return nil, errors.New("redisstore: empty Redis URL")
	}
	var parsed any
	var err error
	if cluster {
		parsed, err = redis.ParseClusterURL(raw)
	} else {
		parsed, err = redis.ParseURL(raw)
	}
	if err != nil {
		return nil, urlError(err)
	}
	u := &redis.UniversalOptions{IsClusterMode: cluster}
	if err := fromParsed(u, parsed); err != nil {
		return nil, err
	}
	return u, nil
}

// fromParsed copies into u every exported field of parsed (a
// *redis.Options or *redis.ClusterOptions) that UniversalOptions has under
// the same name and type; a single address (Addr) becomes Addrs. Network is
// the one field UniversalOptions lacks: go-redis derives it again from the
// address ("unix" for a path), which a test checks. Anything else the parser
// set that UniversalOptions cannot carry is an error, not silently lost.
func fromParsed(u *redis.UniversalOptions, parsed any) error {
	src := reflect.ValueOf(parsed).Elem()
	dst := reflect.ValueOf(u).Elem()
	for i := 0; i < src.NumField(); i++ {
		f := src.Type().Field(i)
		v := src.Field(i)
		if !f.IsExported() || v.IsZero() {
			continue
		}
		switch f.Name {
		case "Addr":
			u.Addrs = []string{v.String()}
			continue
		case "Network":
			continue
		}
		d := dst.FieldByName(f.Name)
		if !d.IsValid() || d.Type() != f.Type {
			return fmt.Errorf("redisstore: the Redis URL sets %s, which this client cannot apply", f.Name)
		}
		d.Set(v)
	}
	return nil
}

// settings applies the store's fixed settings (see NewClient) to u, each
// once for both modes.
func settings(u *redis.UniversalOptions, o ClientOptions) {
	u.DialTimeout = timeout(o.DialTimeout, u.DialTimeout)
	u.ReadTimeout = timeout(o.ReadTimeout, u.ReadTimeout)
	u.WriteTimeout = timeout(o.WriteTimeout, u.WriteTimeout)
	if o.PoolSize > 0 {
		u.PoolSize = o.PoolSize
	}
	// The read timeout is the whole budget: the pool wait too.
	u.PoolTimeout = u.ReadTimeout
	u.ContextTimeoutEnabled = true
	u.MaxRetries = -1
	u.DialerRetries = dialAttempts
	u.ConnMaxIdleTime, u.ConnMaxLifetime = connMaxIdle, connMaxLifetime
	u.DisableIdentity = true
	u.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	u.TLSConfig = secure(u.TLSConfig)
	if o.Credentials != nil {
		u.CredentialsProviderContext = o.Credentials
	}
}

// deadlineHook gives every command (and pipeline) one deadline, budget
// after it starts, for the pool wait, the dial and the round trip together.
// A cluster client's hook wraps its redirects and retries too.
type deadlineHook struct{ budget time.Duration }

func (deadlineHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h deadlineHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		ctx, cancel := context.WithTimeout(ctx, h.budget)
		defer cancel()
		return next(ctx, cmd)
	}
}

func (h deadlineHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		ctx, cancel := context.WithTimeout(ctx, h.budget)
		defer cancel()
		return next(ctx, cmds)
	}
}

// noResendHook, on each node of a cluster client, keeps the cluster client
// from sending a command again after a failure that may have come after the
// command reached Redis (a broken connection, a read timeout): the cluster
// client retries those, and a script run twice creates two jobs for one
// answer. Failures before sending (a refused dial, the pool) and error
// replies (MOVED, TRYAGAIN, CLUSTERDOWN...), after which Redis did nothing,
// are still retried within the deadline.
type noResendHook struct{}

func (noResendHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (noResendHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { return markSent(next(ctx, cmd)) }
}

func (noResendHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { return markSent(next(ctx, cmds)) }
}

// sentError is a failure after which the command may have run. It has no
// Unwrap on purpose, so go-redis does not recognise its cause as worth a
// retry; translate looks through it.
type sentError struct{ cause error }

func (e *sentError) Error() string { return e.cause.Error() }

// markSent wraps err in a sentError when the command may have reached
// Redis: any I/O failure but a dial's, and an EOF.
func markSent(err error) error {
	var op *net.OpError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &op):
		if op.Op == "dial" {
			return err
		}
	case !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, os.ErrDeadlineExceeded):
		return err
	}
	return &sentError{err}
}

// clientTimeout is the read timeout of a go-redis client, the default of
// Options.OpTimeout; 0 when rdb has none or is of another kind.
func clientTimeout(rdb redis.UniversalClient) time.Duration {
	var d time.Duration
	switch c := rdb.(type) {
	case *redis.Client:
		d = c.Options().ReadTimeout
	case *redis.ClusterClient:
		d = c.Options().ReadTimeout
	}
	return max(d, 0)
}

// timeout picks the explicit option, else the URL's value, else the default.
func timeout(opt, fromURL time.Duration) time.Duration {
	switch {
	case opt > 0:
		return opt
	case fromURL > 0:
		return fromURL
	}
	return defaultTimeout
}

// secure raises a TLS configuration to TLS 1.2 at least; nil stays nil.
func secure(c *tls.Config) *tls.Config {
	if c == nil {
		return nil
	}
	if c.MinVersion < tls.VersionTLS12 {
		c.MinVersion = tls.VersionTLS12
	}
	return c
}

// urlError reports a URL that does not parse without quoting the URL, which
// may hold a password.
func urlError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("redisstore: invalid Redis URL: %s", ocypod.RedactSecrets(err.Error()))
}

// RouteLogs sends go-redis's own log lines (dial failures, pool events) to
// log at Warn level, with secrets redacted, instead of the standard logger.
// go-redis has one process-wide logger, so call it once from main.
func RouteLogs(log *slog.Logger) {
	redis.SetLogger(slogPrinter{log})
}

type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Printf(ctx context.Context, format string, v ...any) {
	p.log.WarnContext(ctx, ocypod.RedactSecrets(fmt.Sprintf(format, v...)), slog.String("component", "go-redis"))
}
