// Package redistest starts private redis-server processes for tests, gives
// each test its own key namespace, and wraps miniredis. Import it only from
// _test.go files.
//
// A package's tests usually share one plain server:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
//
//	func TestX(t *testing.T) {
//		t.Parallel()
//		rdb := redistest.Shared(t).Client()
//		ns := redistest.Namespace(t) // keys "{<ns>}:..." belong to this test
//		...
//	}
//
// SharedCluster is a one-node cluster (every slot on one server, so a
// script's CROSSSLOT error shows); SharedCluster3 and StartCluster are real
// clusters of several primaries, with the node serving each key, per-node
// statistics, and nodes to stop and restart for fault tests. Server.Pause
// hangs a server (SIGSTOP) as an overloaded Redis would.
//
// redis-server must be on PATH (CI's .ci/run installs Debian's); without it
// the tests fail with a message saying so.
package redistest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// sharedServer is a package-wide server started on first use.
type sharedServer struct {
	mu   sync.Mutex
	opts Options
	srv  *Server
	err  error
}

var (
	shared        = &sharedServer{}
	sharedCluster = &sharedServer{opts: Options{Cluster: true}}
)

func (s *sharedServer) get(tb testing.TB) *Server {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil && s.err == nil {
		s.srv, s.err = StartServer(s.opts)
	}
	if s.err != nil {
		tb.Fatalf("redistest: %v", s.err)
	}
	return s.srv
}

func (s *sharedServer) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		if err := s.srv.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "redistest:", err)
		}
		s.srv = nil
	}
}

// Shared returns the package-wide plain server, starting it on first use.
// It fails tb when the server cannot start (for example, redis-server is
// not installed). Main stops it.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	return shared.get(tb)
}

// SharedCluster returns the package-wide single-node cluster server (see
// Options.Cluster), starting it on first use; like Shared otherwise.
func SharedCluster(tb testing.TB) *Server {
	tb.Helper()
	return sharedCluster.get(tb)
}

// sharedMulti is a package-wide multi-node cluster started on first use.
type sharedMulti struct {
	mu      sync.Mutex
	opts    ClusterOptions
	cluster *Cluster
	err     error
}

var sharedCluster3 = &sharedMulti{opts: ClusterOptions{Primaries: 3}}

// SharedCluster3 returns the package-wide cluster of 3 primaries, starting
// it on first use (a few seconds); like Shared otherwise. Tests share it:
// they use their own namespaces and never stop its nodes (fault tests start
// their own with StartCluster).
func SharedCluster3(tb testing.TB) *Cluster {
	tb.Helper()
	s := sharedCluster3
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cluster == nil && s.err == nil {
		s.cluster, s.err = StartCluster(s.opts)
	}
	if s.err != nil {
		tb.Fatalf("redistest: %v", s.err)
	}
	return s.cluster
}

func (s *sharedMulti) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cluster != nil {
		if err := s.cluster.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "redistest:", err)
		}
		s.cluster = nil
	}
}

// Main runs the tests of m, then stops the shared servers, then exits with
// the tests' exit code. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	shared.close()
	sharedCluster.close()
	sharedCluster3.close()
	os.Exit(code)
}

var namespaces atomic.Uint64

// Namespace returns a key namespace no other call of this process returns:
// the test's name reduced to [A-Za-z0-9_.-] plus a counter, at most 64
// bytes (redisstore's limit). Tests with their own namespaces can share one
// server and run in parallel.
func Namespace(tb testing.TB) string {
	suffix := "-" + strconv.FormatUint(namespaces.Add(1), 10)
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			return r
		}
		return '_'
	}, tb.Name())
	if limit := 64 - len(suffix); len(name) > limit {
		name = name[len(name)-limit:] // the end names the subtest
	}
	return name + suffix
}

// Miniredis starts an in-process miniredis for tb, and a client to it; both
// are closed when tb ends.
func Miniredis(tb testing.TB) (*miniredis.Miniredis, redis.UniversalClient) {
	tb.Helper()
	m := miniredis.RunT(tb)
	rdb := miniClient(m)
	tb.Cleanup(func() { _ = rdb.Close() })
	return m, rdb
}

// MiniredisClient starts an in-process miniredis and returns a client to it
// and the function that closes both. It is for examples, which have no
// testing.TB (tests use Miniredis); it panics if miniredis cannot start.
func MiniredisClient() (redis.UniversalClient, func()) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		panic("redistest: starting miniredis: " + err.Error())
	}
	rdb := miniClient(m)
	return rdb, func() { _ = rdb.Close(); m.Close() }
}

// miniClient is a client of m, without the handshake commands miniredis
// does not know.
func miniClient(m *miniredis.Miniredis) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr:                     m.Addr(),
		DisableIdentity:          true,
		MaintNotificationsConfig: noMaint(),
	})
}

func noMaint() *maintnotifications.Config {
	return &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
}

// ping checks that a client reaches its server.
func ping(ctx context.Context, rdb redis.UniversalClient) error {
	return rdb.Ping(ctx).Err()
}
