// Package testserver runs an ocyless server in the process for the tests
// and examples of package client and package worker: the real route table
// (shared/httpapi) over the real store (shared/redisstore) on an embedded
// miniredis, behind httptest. Its clock can be moved forward, its sweeps
// run on demand, and its Redis made unreachable, so tests decide when
// jobs time out, retries fall due and requests answer 503.
package testserver

import (
	"context"
	"net"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/ocyless/ocyless/shared/httpapi"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/sweep"
)

// Server is a running in-process server.
type Server struct {
	URL string

	http  *httptest.Server
	mini  *miniredis.Miniredis
	rdb   *redis.Client
	store *redisstore.Store

	offset atomic.Int64 // nanoseconds the clock is ahead of time.Now
	down   atomic.Bool
}

// Start starts a server; Close stops it.
func Start() (*Server, error) {
	s := &Server{mini: miniredis.NewMiniRedis()}
	// Over TCP, not miniredis's in-memory pipe: a pipe has no buffer, so a
	// large pipeline would block writing while miniredis blocks writing
	// its first reply.
	if err := s.mini.Start(); err != nil {
		return nil, err
	}
	s.rdb = redis.NewClient(&redis.Options{
		Dialer:                   s.dial,
		DialTimeout:              2 * time.Second,
		ReadTimeout:              2 * time.Second,
		WriteTimeout:             2 * time.Second,
		ContextTimeoutEnabled:    true,
		MaxRetries:               -1,
		DialerRetries:            1,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	store, err := redisstore.New(s.rdb, redisstore.Options{Now: s.Now})
	if err != nil {
		s.closeRedis()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := store.Open(ctx); err != nil {
		s.closeRedis()
		return nil, err
	}
	s.store = store
	s.http = httptest.NewServer(httpapi.New(store, httpapi.Options{Now: s.Now}).Handler())
	s.URL = s.http.URL
	return s, nil
}

// New starts a server that stops when tb ends.
func New(tb testing.TB) *Server {
	tb.Helper()
	s, err := Start()
	if err != nil {
		tb.Fatalf("testserver: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server: requests in flight are cut off.
func (s *Server) Close() {
	s.http.CloseClientConnections()
	s.http.Close()
	s.closeRedis()
}

func (s *Server) closeRedis() {
	_ = s.rdb.Close()
	s.mini.Close()
}

// Now is the server's clock: time.Now moved forward by every Advance.
func (s *Server) Now() time.Time { return time.Now().Add(time.Duration(s.offset.Load())) }

// Advance moves the server's clock forward by d.
func (s *Server) Advance(d time.Duration) { s.offset.Add(int64(d)) }

// Sweep runs one sweep of kind until nothing more is due, as the local
// server's sweep loops do.
func (s *Server) Sweep(ctx context.Context, kind sweep.Kind) error {
	_, err := sweep.Once(ctx, s.store, kind, nil)
	return err
}

// SetDown makes Redis unreachable (dials are refused and open
// connections reset, so requests answer 503 "Failed to connect to Redis:
// connection failed") or reachable again.
func (s *Server) SetDown(down bool) { s.down.Store(down) }

// errDown is what dialling a Redis that is down gives: a refused
// connection, which the store answers with 503.
var errDown = &net.OpError{Op: "dial", Net: "pipe", Err: syscall.ECONNREFUSED}

// quiet drops go-redis's own log lines (a refused dial is logged by the
// pool each time), which SetDown makes on purpose.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func init() { redis.SetLogger(quiet{}) }

func (s *Server) dial(context.Context, string, string) (net.Conn, error) {
	if s.down.Load() {
		return nil, errDown
	}
	c, err := net.Dial("tcp", s.mini.Addr())
	if err != nil {
		return nil, err
	}
	return &faultConn{Conn: c, down: &s.down}, nil
}

// faultConn is a connection to miniredis that fails as a reset TCP
// connection would while the server is down.
type faultConn struct {
	net.Conn
	down *atomic.Bool
}

func (c *faultConn) Read(p []byte) (int, error) {
	if c.down.Load() {
		return 0, &net.OpError{Op: "read", Net: "pipe", Err: syscall.ECONNRESET}
	}
	return c.Conn.Read(p)
}

func (c *faultConn) Write(p []byte) (int, error) {
	if c.down.Load() {
		return 0, &net.OpError{Op: "write", Net: "pipe", Err: syscall.ECONNRESET}
	}
	return c.Conn.Write(p)
}
