package redisstore

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redistest"
)

// rowCases produce, for each row of unavailableErrors, the failure it is
// for: from a real redis-server where one can be brought to it, else from
// fakeRedis or a misbehaving listener. TestUnavailableRows runs them all.
var rowCases = map[string][]rowCase{
	"BUSY":        {{"script past busy-reply-threshold", busyServer}},
	"maxclients":  {{"maxclients reached", maxClientsReply}},
	"LOADING":     {{"fake", fakeReply("-LOADING Redis is loading the dataset in memory")}},
	"OOM":         {{"maxmemory with noeviction", outOfMemory}},
	"READONLY":    {{"replica", replica(false)}},
	"MASTERDOWN":  {{"replica without its primary", replica(true)}},
	"NOREPLICAS":  {{"min-replicas-to-write", noReplicas}},
	"CLUSTERDOWN": {{"slots not covered", clusterDown}},
	"TRYAGAIN":    {{"fake", fakeReply("-TRYAGAIN Multiple keys request during rehashing of slot")}},
	"NOAUTH":      {{"requirepass", noAuth}},
	"WRONGPASS":   {{"ACL user, wrong password", wrongPass}},
	"unauthenticated": {
		{"long command before AUTH", unauthenticatedMultibulk},
		{"fake, on a command", fakeReply("-ERR unauthenticated")},
		{"fake, on AUTH", fakeAuth("-ERR unauthenticated")},
		{"fake, legacy AUTH", fakeAuth("-ERR invalid password")},
	},
	"context deadline": {{"waiting for a connection", poolWait(false)}},
	"context canceled": {{"waiting for a connection", poolWait(true)}},
	"pool timeout":     {{"PoolTimeout", poolTimeout}},
	"network timeout":  {{"read", readTimeout}, {"dial", dialTimeout}},
	"pool exhausted":   {{"MaxActiveConns", poolExhausted}},
	"closed client":    {{"Close", closedClient}},
	"EOF":              {{"CLIENT KILL", clientKill}, {"fake", fakeReply("")}},
	"TLS":              {{"plain-text server", tlsToPlain}, {"unknown authority", tlsUnknownCA}},
	"network":          {{"refused", refused}, {"no socket", noSocket}},
}

type rowCase struct {
	name    string
	produce func(t *testing.T) error
}

// TestUnavailableRows: every row of unavailableErrors has a case, each
// case's error is classified by exactly that row, and the store's error
// carries the row's fixed text and keeps the cause.
func TestUnavailableRows(t *testing.T) {
	t.Parallel()
	for i := range unavailableErrors {
		row := &unavailableErrors[i]
		cases := rowCases[row.name]
		if len(cases) == 0 {
			t.Errorf("row %q has no test case", row.name)
		}
		for _, tc := range cases {
			t.Run(row.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				err := tc.produce(t)
				if err == nil {
					t.Fatal("no error")
				}
				got := translate(err)
				var oe *ocypod.Error
				if !errors.As(got, &oe) || oe.Kind != ocypod.KindUnavailable {
					t.Fatalf("translate(%v) = %v, want a 503", err, got)
				}
				if want := "Failed to connect to Redis: " + row.reason; oe.Message != want {
					t.Errorf("message %q, want %q", oe.Message, want)
				}
				if c := classify(oe.Err); c != row {
					t.Errorf("cause %q (%T) classified as %+v, want row %q", oe.Err, oe.Err, c, row.name)
				}
				t.Logf("%v", oe.Err)
			})
		}
	}
	for name := range rowCases {
		found := false
		for _, row := range unavailableErrors {
			found = found || row.name == name
		}
		if !found {
			t.Errorf("rowCases has %q, which is no row", name)
		}
	}
}

// TestInternalReplies: other error replies of a real server are 500s.
func TestInternalReplies(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv := private(t, redistest.Options{})
	rdb := srv.Client()
	key := redistest.Namespace(t)
	if err := rdb.Set(ctx, key, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	cluster := redistest.SharedCluster(t).Client()
	for name, err := range map[string]error{
		"WRONGTYPE":    rdb.HGetAll(ctx, key).Err(),
		"script error": rdb.Eval(ctx, "return redis.call('NOSUCHCOMMAND')", nil).Err(),
		"syntax error": rdb.Eval(ctx, "return (", nil).Err(),
		"CROSSSLOT":    cluster.Eval(ctx, "return 1", []string{"{a}x", "{b}y"}).Err(),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if got := translate(err); ocypod.ErrorKind(got) != ocypod.KindInternal || ocypod.ErrorMessage(got) != "Internal server error" {
			t.Errorf("%s: translate(%v) = %v, want a 500", name, err, got)
		}
	}
}

// private starts a redis-server for one test.
func private(t *testing.T, o redistest.Options) *redistest.Server {
	t.Helper()
	srv, err := redistest.StartServer(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// storeAt is a store with NewClient's settings and a 1s timeout on url.
func storeAt(t *testing.T, o ClientOptions) *Store {
	t.Helper()
	if o.ReadTimeout == 0 {
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout = 5*time.Second, 5*time.Second, 5*time.Second
	}
	rdb, err := NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	s, err := New(rdb, Options{Namespace: "errs"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func createJob(t *testing.T, s *Store) error {
	_, err := s.CreateJob(t.Context(), "q", ocypod.JobSpec{})
	return err
}

func putQueue(t *testing.T, s *Store) {
	t.Helper()
	if _, err := s.PutQueue(t.Context(), "q", ocypod.DefaultQueueSettings()); err != nil {
		t.Fatal(err)
	}
}

// busyServer runs an endless script on a server whose busy-reply-threshold
// is 50ms, then creates a job.
func busyServer(t *testing.T) error {
	ctx := t.Context()
	srv := private(t, redistest.Options{})
	if err := srv.Client().ConfigSet(ctx, "busy-reply-threshold", "50").Err(); err != nil {
		t.Fatal(err)
	}
	loop := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Addr(), ReadTimeout: -1, MaxRetries: -1})
	t.Cleanup(func() { _ = loop.Close() })
	go func() { _ = loop.Eval(t.Context(), "while true do end", nil).Err() }()
	probe := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = probe.Close() })
	for { // until the script runs past the threshold (each PING waits for it)
		err := probe.Ping(ctx).Err()
		if err != nil && strings.HasPrefix(err.Error(), "BUSY ") {
			break
		}
		if err != nil {
			t.Fatalf("PING = %v", err)
		}
	}
	return createJob(t, storeAt(t, ClientOptions{URL: srv.URL()}))
}

// fullServer sets maxclients to 1: the helper's own connection fills it.
func fullServer(t *testing.T) *redistest.Server {
	t.Helper()
	srv := private(t, redistest.Options{})
	if err := srv.Client().ConfigSet(t.Context(), "maxclients", "1").Err(); err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestMaxClientsStore: go-redis takes a full server's "max number of
// clients" reply for a refused HELLO, so the store sees the connection the
// server closed after it (EOF or a broken pipe): a 503 all the same.
func TestMaxClientsStore(t *testing.T) {
	t.Parallel()
	err := createJob(t, storeAt(t, ClientOptions{URL: fullServer(t).URL()}))
	if ocypod.ErrorKind(err) != ocypod.KindUnavailable || ocypod.ErrorMessage(err) != "Failed to connect to Redis: connection failed" {
		t.Fatalf("CreateJob on a full server = %v", err)
	}
}

// maxClientsReply reads the reply a full server sends a new connection.
func maxClientsReply(t *testing.T) error {
	c, err := net.Dial("unix", fullServer(t).Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "-") {
		t.Fatalf("a full server said %q, %v", line, err)
	}
	return replyError(strings.TrimSuffix(line[1:], "\r\n"))
}

func fakeReply(reply string) func(t *testing.T) error {
	return func(t *testing.T) error {
		f := startFake(t, reply)
		return createJob(t, storeAt(t, ClientOptions{URL: "redis://" + f.addr()}))
	}
}

// fakeAuth answers the AUTH of a client with credentials with reply.
func fakeAuth(reply string) func(t *testing.T) error {
	return func(t *testing.T) error {
		f := startFake(t, reply)
		return createJob(t, storeAt(t, ClientOptions{URL: "redis://iam-user:token@" + f.addr()}))
	}
}

// outOfMemory sets maxmemory below what the server uses (the policy is
// noeviction by default), then creates a job in an existing queue.
func outOfMemory(t *testing.T) error {
	srv := private(t, redistest.Options{})
	s := storeAt(t, ClientOptions{URL: srv.URL()})
	putQueue(t, s)
	if err := srv.Client().ConfigSet(t.Context(), "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	return createJob(t, s)
}

// replica makes a server the replica of a primary that is gone (a closed
// port), then writes (READONLY) or, with replica-serve-stale-data off,
// reads (MASTERDOWN).
func replica(stale bool) func(t *testing.T) error {
	return func(t *testing.T) error {
		ctx := t.Context()
		srv := private(t, redistest.Options{})
		s := storeAt(t, ClientOptions{URL: srv.URL()})
		putQueue(t, s)
		admin := srv.Client()
		if err := admin.Do(ctx, "REPLICAOF", "127.0.0.1", closedPort(t)).Err(); err != nil {
			t.Fatal(err)
		}
		if !stale {
			return createJob(t, s)
		}
		if err := admin.ConfigSet(ctx, "replica-serve-stale-data", "no").Err(); err != nil {
			t.Fatal(err)
		}
		_, err := s.JobStatus(ctx, 1)
		return err
	}
}

func noReplicas(t *testing.T) error {
	srv := private(t, redistest.Options{})
	s := storeAt(t, ClientOptions{URL: srv.URL()})
	putQueue(t, s)
	if err := srv.Client().ConfigSet(t.Context(), "min-replicas-to-write", "1").Err(); err != nil {
		t.Fatal(err)
	}
	return createJob(t, s)
}

// clusterDown takes slots away from a one-node cluster, so it no longer
// covers them all (cluster-require-full-coverage is on by default).
func clusterDown(t *testing.T) error {
	srv := private(t, redistest.Options{Cluster: true})
	s := storeAt(t, ClientOptions{URL: srv.URL(), ClusterMode: true})
	putQueue(t, s)
	if err := srv.Client().(*redis.ClusterClient).ForEachShard(t.Context(), func(ctx context.Context, c *redis.Client) error {
		return c.Do(ctx, "CLUSTER", "DELSLOTSRANGE", 0, 0).Err()
	}); err != nil {
		t.Fatal(err)
	}
	return createJob(t, s)
}

func requirePass(t *testing.T) *redistest.Server {
	t.Helper()
	srv := private(t, redistest.Options{})
	if err := srv.Client().ConfigSet(t.Context(), "requirepass", "s3cret").Err(); err != nil {
		t.Fatal(err)
	}
	return srv
}

// noAuth reads a job without the password.
func noAuth(t *testing.T) error {
	_, err := storeAt(t, ClientOptions{URL: requirePass(t).URL()}).JobStatus(t.Context(), 1)
	return err
}

// unauthenticatedMultibulk creates a job without the password: Redis
// refuses a command of more than 10 arguments from an unauthenticated
// connection before it says NOAUTH.
func unauthenticatedMultibulk(t *testing.T) error {
	return createJob(t, storeAt(t, ClientOptions{URL: requirePass(t).URL()}))
}

func wrongPass(t *testing.T) error {
	srv := private(t, redistest.Options{})
	if err := srv.Client().Do(t.Context(), "ACL", "SETUSER", "worker", "on", ">right", "~*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	return createJob(t, storeAt(t, ClientOptions{URL: srv.URL(), Credentials: func(context.Context) (string, string, error) {
		return "worker", "wrong", nil
	}}))
}

// holdOnlyConnection blocks the one connection of rdb (PoolSize 1) in a
// BLPOP until the test ends.
func holdOnlyConnection(t *testing.T, srv *redistest.Server, rdb redis.UniversalClient) {
	t.Helper()
	done := make(chan struct{})
	go func() { _ = rdb.BLPop(t.Context(), 0, redistest.Namespace(t)).Err(); close(done) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	for { // until the BLPOP blocks
		n, err := srv.Client().Do(t.Context(), "INFO", "clients").Text()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(n, "blocked_clients:1") {
			return
		}
	}
}

// poolWait waits for the one pooled connection until the context ends.
func poolWait(cancel bool) func(t *testing.T) error {
	return func(t *testing.T) error {
		srv := private(t, redistest.Options{})
		rdb, err := NewClient(ClientOptions{URL: srv.URL(), PoolSize: 1, ReadTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rdb.Close() })
		holdOnlyConnection(t, srv, rdb)
		s, err := New(rdb, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, stop := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer stop()
		if cancel {
			ctx, stop = context.WithCancel(t.Context())
			time.AfterFunc(100*time.Millisecond, stop)
		}
		_, err = s.JobStatus(ctx, 1)
		return err
	}
}

func poolTimeout(t *testing.T) error {
	srv := private(t, redistest.Options{})
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Addr(), PoolSize: 1, PoolTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	holdOnlyConnection(t, srv, rdb)
	return rdb.Get(t.Context(), "k").Err()
}

func poolExhausted(t *testing.T) error {
	srv := private(t, redistest.Options{})
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Addr(), MaxActiveConns: 1})
	t.Cleanup(func() { _ = rdb.Close() })
	holdOnlyConnection(t, srv, rdb)
	return rdb.Get(t.Context(), "k").Err()
}

// readTimeout pauses the server (SIGSTOP) under a store with a 200ms
// timeout and no deadline of its own beyond the read timeout.
func readTimeout(t *testing.T) error {
	srv := private(t, redistest.Options{})
	s := storeAt(t, ClientOptions{URL: srv.URL(), ReadTimeout: 200 * time.Millisecond})
	s.o.OpTimeout = time.Minute // leave the read timeout to fire
	putQueue(t, s)
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Resume() })
	return createJob(t, s)
}

// dialTimeout dials a listener whose accept queue is full: the kernel drops
// the SYN, so the dial times out.
func dialTimeout(t *testing.T) error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)
	for range 4 { // fill the accept queue; these dials succeed
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			break
		}
		t.Cleanup(func() { _ = c.Close() })
	}
	s := storeAt(t, ClientOptions{URL: "redis://" + addr, DialTimeout: 200 * time.Millisecond, ReadTimeout: time.Minute})
	s.o.OpTimeout = time.Minute // leave the dial timeout to fire
	return createJob(t, s)
}

func closedClient(t *testing.T) error {
	srv := redistest.Shared(t)
	rdb, err := NewClient(ClientOptions{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := New(rdb, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return createJob(t, s)
}

// clientKill closes a connection from the server's side while the client
// waits for a reply.
func clientKill(t *testing.T) error {
	ctx := t.Context()
	srv := private(t, redistest.Options{})
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Addr(), MaxRetries: -1, ClientName: "victim"})
	t.Cleanup(func() { _ = rdb.Close() })
	errc := make(chan error, 1)
	go func() { errc <- rdb.BLPop(ctx, 0, "k").Err() }()
	for { // until the BLPOP blocks
		n, err := srv.Client().Do(ctx, "INFO", "clients").Text()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(n, "blocked_clients:1") {
			break
		}
	}
	if err := srv.Client().Do(ctx, "CLIENT", "KILL", "USER", "default", "SKIPME", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	return <-errc
}

// tlsToPlain speaks TLS to a server that answers in plain text. (A real
// redis-server waits for the end of a line that never comes: a timeout.)
func tlsToPlain(t *testing.T) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Read(make([]byte, 512))
			_, _ = io.WriteString(c, "-ERR Protocol error: invalid multibulk length\r\n")
			_ = c.Close()
		}
	}()
	return createJob(t, storeAt(t, ClientOptions{URL: "rediss://" + ln.Addr().String()}))
}

// tlsUnknownCA connects to a TLS server whose certificate no trusted
// authority signed.
func tlsUnknownCA(t *testing.T) error {
	ts := httptest.NewTLSServer(nil)
	t.Cleanup(ts.Close)
	return createJob(t, storeAt(t, ClientOptions{URL: "rediss://" + ts.Listener.Addr().String()}))
}

// noSocket dials the socket of a stopped server.
func noSocket(t *testing.T) error {
	srv := private(t, redistest.Options{})
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	return createJob(t, storeAt(t, ClientOptions{URL: srv.URL()}))
}

func refused(t *testing.T) error {
	return createJob(t, storeAt(t, ClientOptions{URL: "redis://127.0.0.1:" + strconv.Itoa(closedPort(t))}))
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	return port
}
