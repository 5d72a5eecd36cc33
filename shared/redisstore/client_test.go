package redisstore_test

import (
	"context"
	"crypto/tls"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

func mustClient(t *testing.T, o redisstore.ClientOptions) redis.UniversalClient {
	t.Helper()
	rdb, err := redisstore.NewClient(o)
	if err != nil {
		t.Fatalf("NewClient(%+v) = %v", o, err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

func TestNewClientSingle(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	rdb := mustClient(t, redisstore.ClientOptions{URL: srv.URL(), PoolSize: 3})
	c, ok := rdb.(*redis.Client)
	if !ok {
		t.Fatalf("NewClient = %T, want *redis.Client", rdb)
	}
	o := c.Options()
	if o.Network != "unix" || o.Addr != srv.Addr() || o.PoolSize != 3 ||
		o.DialTimeout != 2*time.Second || o.ReadTimeout != 2*time.Second || o.WriteTimeout != 2*time.Second ||
		o.PoolTimeout != 2*time.Second || !o.ContextTimeoutEnabled || o.MaxRetries != 0 || !o.DisableIdentity || o.TLSConfig != nil ||
		o.MaintNotificationsConfig == nil || o.MaintNotificationsConfig.Mode != maintnotifications.ModeDisabled {
		t.Fatalf("options = %+v", o)
	}
	if err := rdb.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("Ping = %v", err)
	}

	rdb = mustClient(t, redisstore.ClientOptions{URL: "redis://h:6380/2?dial_timeout=5s&read_timeout=7s", ReadTimeout: time.Second})
	o = rdb.(*redis.Client).Options()
	if o.Addr != "h:6380" || o.DB != 2 || o.DialTimeout != 5*time.Second || o.ReadTimeout != time.Second || o.WriteTimeout != 2*time.Second || o.PoolTimeout != time.Second {
		t.Fatalf("options = addr %s db %d timeouts %v %v %v", o.Addr, o.DB, o.DialTimeout, o.ReadTimeout, o.WriteTimeout)
	}

	rdb = mustClient(t, redisstore.ClientOptions{URL: "rediss://user:pw@cache.example:6379"})
	o = rdb.(*redis.Client).Options()
	if o.TLSConfig == nil || o.TLSConfig.MinVersion != tls.VersionTLS12 || o.TLSConfig.ServerName != "cache.example" || o.Username != "user" {
		t.Fatalf("rediss options = %+v", o)
	}
}

func TestNewClientCluster(t *testing.T) {
	t.Parallel()
	srv := redistest.SharedCluster(t)
	rdb := mustClient(t, redisstore.ClientOptions{URL: srv.URL(), ClusterMode: true, DialTimeout: time.Second})
	c, ok := rdb.(*redis.ClusterClient)
	if !ok {
		t.Fatalf("NewClient = %T, want *redis.ClusterClient", rdb)
	}
	o := c.Options()
	if o.DialTimeout != time.Second || o.ReadTimeout != 2*time.Second || o.PoolTimeout != 2*time.Second || !o.ContextTimeoutEnabled ||
		o.MaxRetries != -1 || !o.DisableIdentity || o.MaintNotificationsConfig.Mode != maintnotifications.ModeDisabled {
		t.Fatalf("options = %+v", o)
	}
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := s.PutQueue(ctx, "q", ocypod.DefaultQueueSettings()); err != nil {
		t.Fatalf("PutQueue through NewClient's cluster client = %v", err)
	}
	// On three nodes, seeded with one as with a configuration endpoint: the
	// namespaces below hash to every node, so most calls follow a MOVED.
	three := redistest.SharedCluster3(t)
	seeded := mustClient(t, redisstore.ClientOptions{URL: three.URL(), ClusterMode: true})
	onNode := map[int]bool{}
	for i := 0; len(onNode) < three.Len(); i++ {
		ns := redistest.Namespace(t)
		onNode[three.NodeForKey(redisstore.LayoutOf(ns, 1).Key(0, "q"))] = true
		s, err := redisstore.New(seeded, redisstore.Options{Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutQueue(ctx, "q", ocypod.DefaultQueueSettings()); err != nil {
			t.Fatalf("PutQueue on node %d = %v", three.NodeForKey(redisstore.LayoutOf(ns, 1).Key(0, "q")), err)
		}
		if c, err := s.CreateJob(ctx, "q", ocypod.JobSpec{}); err != nil || c.ID != 1 {
			t.Fatalf("CreateJob = %d, %v", c.ID, err)
		}
	}
	rdb = mustClient(t, redisstore.ClientOptions{URL: "rediss://cfg.example:6379", ClusterMode: true})
	if tc := rdb.(*redis.ClusterClient).Options().TLSConfig; tc == nil || tc.MinVersion != tls.VersionTLS12 {
		t.Fatalf("rediss cluster TLS = %+v", tc)
	}
}

func TestNewClientBadURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url     string
		cluster bool
	}{
		{"", false},
		{"http://host", false},
		{"redis://user:s3cret@host:notaport", false},
		{"redis://user:s3cret@host:6379/notadb", false},
		{"redis://:s3cret@host:6379?bogus=1", false},
		{"unix:///tmp/redis.sock", true},
		{"redis://user:s3cret@host:notaport", true},
		{"redis://:s3cret@host\x7f", false},
	} {
		_, err := redisstore.NewClient(redisstore.ClientOptions{URL: tc.url, ClusterMode: tc.cluster})
		if err == nil {
			t.Errorf("NewClient(%q, cluster %v) = nil error", tc.url, tc.cluster)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("NewClient(%q) error %q leaks the password", tc.url, err)
		}
	}
}

func TestNewClientCredentials(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	ctx := t.Context()
	user := redistest.Namespace(t)
	if err := srv.Client().Do(ctx, "ACL", "SETUSER", user, "on", ">right-pass", "~*", "&*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Client().Do(context.WithoutCancel(ctx), "ACL", "DELUSER", user) })
	calls := 0
	rdb := mustClient(t, redisstore.ClientOptions{URL: srv.URL(), Credentials: func(context.Context) (string, string, error) {
		calls++
		return user, "right-pass", nil
	}})
	if who, err := rdb.Do(ctx, "ACL", "WHOAMI").Text(); err != nil || who != user || calls == 0 {
		t.Fatalf("ACL WHOAMI = %q, %v (credentials called %d times), want %q", who, err, calls, user)
	}
	bad := mustClient(t, redisstore.ClientOptions{URL: srv.URL(), Credentials: func(context.Context) (string, string, error) {
		return user, "wrong-pass", nil
	}})
	s, err := redisstore.New(bad, redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Ping(ctx)
	wantKind(t, "Ping with a wrong password", err, ocypod.KindUnavailable, "")
	if strings.Contains(err.Error(), "wrong-pass") {
		t.Errorf("Ping error %q leaks the password", err)
	}
}

// TestUnavailable stops Redis under a store: every operation reports
// ocypod.Unavailable. After a restart, a client whose pooled connection died
// meanwhile works again at once (go-redis checks pooled connections before
// reusing them, as after a Lambda freeze).
func TestUnavailable(t *testing.T) {
	t.Parallel()
	srv, err := redistest.StartServer(redistest.Options{AppendOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ctx := t.Context()
	newStore := func() (*redisstore.Store, redis.UniversalClient) {
		// One connection: after one failed dial the pool fails fast.
		rdb := mustClient(t, redisstore.ClientOptions{URL: srv.URL(), PoolSize: 1})
		s, err := redisstore.New(rdb, redisstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s, rdb
	}
	down, _ := newStore()
	idle, idleClient := newStore()
	if _, err := down.PutQueue(ctx, "q", ocypod.DefaultQueueSettings()); err != nil {
		t.Fatal(err)
	}
	c, err := idle.CreateJob(ctx, "q", ocypod.JobSpec{})
	if err != nil {
		t.Fatal(err)
	}
	id := c.ID
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	for name, f := range storeCalls(down, id) {
		err := f(ctx)
		wantKind(t, name+" with Redis down", err, ocypod.KindUnavailable, "")
		if !strings.HasPrefix(ocypod.ErrorMessage(err), "Failed to connect to Redis: ") {
			t.Errorf("%s message = %q", name, ocypod.ErrorMessage(err))
		}
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if st, err := idle.JobStatus(ctx, id); err != nil || st != ocypod.StatusQueued {
		t.Fatalf("JobStatus after restart = %s, %v, want queued (append-only data kept)", st, err)
	}

	if err := idleClient.Close(); err != nil {
		t.Fatal(err)
	}
	err = idle.Ping(ctx)
	wantKind(t, "Ping on a closed client", err, ocypod.KindUnavailable, "")
	if !errors.Is(err, redis.ErrClosed) {
		t.Errorf("Ping on a closed client = %v, want it to wrap redis.ErrClosed", err)
	}
}

// TestOperationDeadline: with Redis hung (SIGSTOP), every store operation
// fails with 503 "timed out" within its budget, also while ten times more
// calls than the pool has connections wait: the client's read timeout by default, or
// Options.OpTimeout. The deadline hook bounds a command through a client of
// NewClient even without the store.
func TestOperationDeadline(t *testing.T) {
	t.Parallel()
	srv, err := redistest.StartServer(redistest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	const timeout, margin = 500 * time.Millisecond, 350 * time.Millisecond
	rdb := mustClient(t, redisstore.ClientOptions{URL: srv.URL(), PoolSize: 2,
		DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout})
	byDefault, err := redisstore.New(rdb, redisstore.Options{Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	shorter, err := redisstore.New(rdb, redisstore.Options{Namespace: redistest.Namespace(t), OpTimeout: timeout / 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := byDefault.PutQueue(ctx, "q", ocypod.DefaultQueueSettings()); err != nil {
		t.Fatal(err)
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Resume() })
	var wg sync.WaitGroup
	for name, f := range storeCalls(byDefault, 1) {
		wg.Go(func() {
			start := time.Now()
			err := f(ctx)
			if took := time.Since(start); took > timeout+margin {
				t.Errorf("%s with Redis hung took %v", name, took)
			}
			if ocypod.ErrorKind(err) != ocypod.KindUnavailable || ocypod.ErrorMessage(err) != "Failed to connect to Redis: timed out" {
				t.Errorf("%s with Redis hung = %v", name, err)
			}
		})
	}
	wg.Go(func() {
		start := time.Now()
		_, err := shorter.CreateJob(ctx, "q", ocypod.JobSpec{})
		if took := time.Since(start); took > timeout/2+margin || ocypod.ErrorKind(err) != ocypod.KindUnavailable {
			t.Errorf("CreateJob with OpTimeout %v took %v: %v", timeout/2, took, err)
		}
	})
	for range 3 {
		wg.Go(func() {
			start := time.Now()
			err := rdb.Get(ctx, "k").Err()
			if took := time.Since(start); took > timeout+margin || err == nil {
				t.Errorf("GET through the client with Redis hung took %v: %v", took, err)
			}
		})
	}
	wg.Wait()
}

// storeCalls calls every Store method once.
func storeCalls(s *redisstore.Store, id uint64) map[string]func(context.Context) error {
	st := ocypod.StatusCompleted
	return map[string]func(context.Context) error{
		"Ping":         s.Ping,
		"Info":         func(ctx context.Context) error { _, err := s.Info(ctx); return err },
		"ListQueues":   func(ctx context.Context) error { _, err := s.ListQueues(ctx); return err },
		"GetQueue":     func(ctx context.Context) error { _, err := s.GetQueue(ctx, "q"); return err },
		"PutQueue":     func(ctx context.Context) error { _, err := s.PutQueue(ctx, "q", ocypod.QueueSettings{}); return err },
		"DeleteQueue":  func(ctx context.Context) error { return s.DeleteQueue(ctx, "q") },
		"QueueSize":    func(ctx context.Context) error { _, err := s.QueueSize(ctx, "q"); return err },
		"QueueJobIDs":  func(ctx context.Context) error { _, err := s.QueueJobIDs(ctx, "q"); return err },
		"CreateJob":    func(ctx context.Context) error { _, err := s.CreateJob(ctx, "q", ocypod.JobSpec{}); return err },
		"NextJob":      func(ctx context.Context) error { _, err := s.NextJob(ctx, "q"); return err },
		"GetJob":       func(ctx context.Context) error { _, err := s.GetJob(ctx, id); return err },
		"JobStatus":    func(ctx context.Context) error { _, err := s.JobStatus(ctx, id); return err },
		"JobOutput":    func(ctx context.Context) error { _, err := s.JobOutput(ctx, id); return err },
		"SetJobOutput": func(ctx context.Context) error { return s.SetJobOutput(ctx, id, nil, nil) },
		"UpdateJob": func(ctx context.Context) error {
			_, _, err := s.UpdateJob(ctx, id, ocypod.JobUpdate{Status: &st}, nil)
			return err
		},
		"Heartbeat":     func(ctx context.Context) error { return s.Heartbeat(ctx, id, nil) },
		"DeleteJob":     func(ctx context.Context) error { return s.DeleteJob(ctx, id) },
		"TagJobIDs":     func(ctx context.Context) error { _, err := s.TagJobIDs(ctx, "t"); return err },
		"SweepTimeouts": func(ctx context.Context) error { _, err := s.SweepTimeouts(ctx); return err },
		"SweepRetries":  func(ctx context.Context) error { _, err := s.SweepRetries(ctx); return err },
		"SweepExpiry":   func(ctx context.Context) error { _, err := s.SweepExpiry(ctx); return err },
	}
}

func TestNewValidatesNamespace(t *testing.T) {
	t.Parallel()
	_, rdb := redistest.Miniredis(t)
	for ns, ok := range map[string]bool{
		"": true, "ocypod": true, "a.b-c_D9": true, strings.Repeat("x", 64): true,
		strings.Repeat("x", 65): false, "a}b": false, "{a}": false, "a b": false, "a:b": false, "ü": false,
	} {
		_, err := redisstore.New(rdb, redisstore.Options{Namespace: ns})
		if (err == nil) != ok || redisstore.ValidNamespace(ns) != ok {
			t.Errorf("New(namespace %q) = %v, ValidNamespace = %v, want ok %v", ns, err, redisstore.ValidNamespace(ns), ok)
		}
	}
	if _, err := redisstore.New(nil, redisstore.Options{}); err == nil {
		t.Errorf("New(nil client) = nil error")
	}
	// The default namespace is "ocypod".
	s, _ := redisstore.New(rdb, redisstore.Options{})
	if _, err := s.PutQueue(t.Context(), "q", ocypod.QueueSettings{}); err != nil {
		t.Fatal(err)
	}
	if n := rdb.HExists(t.Context(), "{ocypod}:q", "q").Val(); !n {
		t.Fatalf("the default namespace did not write {ocypod}:q")
	}
}

// TestNewClientURLSettings: the URL's own query settings reach the client
// in both modes (NewClient builds both through one UniversalOptions), and
// the store's fixed settings override the URL's where they must.
func TestNewClientURLSettings(t *testing.T) {
	t.Parallel()
	rdb := mustClient(t, redisstore.ClientOptions{URL: "redis://u:p@h:6380/3?client_name=me&pool_size=7&min_idle_conns=1&max_idle_conns=5" +
		"&max_active_conns=9&pool_fifo=true&protocol=2&max_retries=4&conn_max_idle_time=1m&pipeline_pool_size=3"})
	o := rdb.(*redis.Client).Options()
	if o.Network != "tcp" || o.Addr != "h:6380" || o.DB != 3 || o.Username != "u" || o.Password != "p" || o.ClientName != "me" ||
		o.PoolSize != 7 || o.MinIdleConns != 1 || o.MaxIdleConns != 5 || o.MaxActiveConns != 9 || !o.PoolFIFO || o.Protocol != 2 ||
		o.PipelinePoolSize != 3 || o.MaxRetries != 0 || o.ConnMaxIdleTime != 4*time.Minute || o.ConnMaxLifetime != time.Hour {
		t.Fatalf("single-node options = %+v", o)
	}
	rdb = mustClient(t, redisstore.ClientOptions{URL: "redis://u:p@h1:6379?addr=h2:6380&max_redirects=5&read_only=true&route_randomly=true" +
		"&pool_size=6&client_name=me&read_timeout=3s&max_retries=4", ClusterMode: true, PoolSize: 8})
	co := rdb.(*redis.ClusterClient).Options()
	if !slices.Equal(co.Addrs, []string{"h1:6379", "h2:6380"}) || co.Username != "u" || co.Password != "p" || co.MaxRedirects != 5 ||
		!co.ReadOnly || !co.RouteRandomly || co.PoolSize != 8 || co.ClientName != "me" || co.ReadTimeout != 3*time.Second ||
		co.PoolTimeout != 3*time.Second || co.MaxRetries != -1 || co.ConnMaxIdleTime != 4*time.Minute || co.ConnMaxLifetime != time.Hour {
		t.Fatalf("cluster options = %+v", co)
	}
	// One address with cluster mode is still a cluster client (a
	// configuration endpoint); without it, a single-node one.
	if _, ok := mustClient(t, redisstore.ClientOptions{URL: "redis://cfg:6379", ClusterMode: true}).(*redis.ClusterClient); !ok {
		t.Fatal("cluster mode with one address is not a cluster client")
	}
}
