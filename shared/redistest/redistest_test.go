package redistest_test

import (
	"maps"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func TestShared(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	if srv != redistest.Shared(t) {
		t.Fatalf("Shared returned two servers")
	}
	if !strings.HasPrefix(srv.URL(), "unix://") || !strings.HasSuffix(srv.URL(), srv.Addr()) {
		t.Fatalf("URL() = %q, Addr() = %q, want a unix socket URL", srv.URL(), srv.Addr())
	}
	ctx := t.Context()
	if err := srv.Client().Set(ctx, redistest.Namespace(t), "v", 0).Err(); err != nil {
		t.Fatalf("SET = %v", err)
	}
	// No persistence in plain mode.
	if v := srv.Client().ConfigGet(ctx, "appendonly").Val()["appendonly"]; v != "no" {
		t.Errorf("appendonly = %q, want no", v)
	}
}

func TestNamespace(t *testing.T) {
	t.Parallel()
	valid := regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	seen := map[string]bool{}
	for _, name := range []string{"plain", "with spaces/and{braces}:colons", strings.Repeat("long", 40)} {
		t.Run(name, func(t *testing.T) {
			for range 3 {
				ns := redistest.Namespace(t)
				if !valid.MatchString(ns) {
					t.Errorf("Namespace() = %q, not a valid namespace", ns)
				}
				if seen[ns] {
					t.Errorf("Namespace() = %q twice", ns)
				}
				seen[ns] = true
			}
		})
	}
}

func TestMiniredis(t *testing.T) {
	t.Parallel()
	m, rdb := redistest.Miniredis(t)
	if err := rdb.Set(t.Context(), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, _ := m.Get("k"); got != "v" {
		t.Fatalf("miniredis GET k = %q, want v", got)
	}
}

func TestAppendOnlyStopRestart(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for _, aof := range []bool{true, false} {
		srv, err := redistest.StartServer(redistest.Options{AppendOnly: aof})
		if err != nil {
			t.Fatal(err)
		}
		rdb := srv.Client()
		if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := srv.Stop(); err != nil {
			t.Fatal(err)
		}
		if err := srv.Stop(); err != nil {
			t.Fatalf("second Stop = %v", err)
		}
		fresh := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Addr(), MaxRetries: -1})
		if err := fresh.Ping(ctx).Err(); err == nil {
			t.Fatalf("PING to a stopped server succeeded")
		}
		fresh.Close()
		if err := srv.Restart(); err != nil {
			t.Fatal(err)
		}
		got, err := rdb.Get(ctx, "k").Result()
		if aof && (err != nil || got != "v") {
			t.Errorf("append-only: GET after restart = %q, %v, want v", got, err)
		}
		if !aof && err != redis.Nil {
			t.Errorf("plain: GET after restart = %q, %v, want nothing", got, err)
		}
		dir := strings.TrimSuffix(srv.Addr(), "/redis.sock")
		if err := srv.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("Close left %s: %v", dir, err)
		}
	}
}

func TestCluster(t *testing.T) {
	t.Parallel()
	srv, err := redistest.StartServer(redistest.Options{Cluster: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	if !strings.HasPrefix(srv.URL(), "redis://127.0.0.1:") {
		t.Fatalf("URL() = %q", srv.URL())
	}
	rdb, ok := srv.Client().(*redis.ClusterClient)
	if !ok {
		t.Fatalf("Client() = %T, want *redis.ClusterClient", srv.Client())
	}
	ctx := t.Context()
	if info := rdb.ClusterInfo(ctx).Val(); !strings.Contains(info, "cluster_state:ok") {
		t.Fatalf("CLUSTER INFO = %q", info)
	}
	// Keys of two slots in one script: the server refuses, which is what
	// makes the cluster tests meaningful.
	err = rdb.Eval(ctx, "return redis.call('GET', KEYS[1])", []string{"{a}x", "{b}y"}).Err()
	if err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Fatalf("cross-slot EVAL = %v, want CROSSSLOT", err)
	}
	// Note: redis-server 7.0 lets a script touch an undeclared key of
	// another slot when the node serves both, so that is not checked here.
	if err := rdb.Set(ctx, "{a}x", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING after restart = %v", err)
	}
}

func TestStartServerWithoutRedis(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := redistest.StartServer(redistest.Options{})
	if err == nil || !strings.Contains(err.Error(), "redis-server not found on PATH") {
		t.Fatalf("StartServer without redis-server = %v", err)
	}
}

// TestPauseResume: a paused server answers nothing, and then everything.
func TestPauseResume(t *testing.T) {
	t.Parallel()
	srv, err := redistest.StartServer(redistest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Addr(), MaxRetries: -1, ReadTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := t.Context()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "i/o timeout") {
		t.Fatalf("PING to a paused server = %v, want a timeout", err)
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING after Resume = %v", err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Pause(); err == nil {
		t.Fatalf("Pause of a stopped server succeeded")
	}
}

// TestSnapshot: two snapshots are equal exactly when the matched keys hold
// the same data, on redis-server and on miniredis.
func TestSnapshot(t *testing.T) {
	t.Parallel()
	_, mini := redistest.Miniredis(t)
	for name, rdb := range map[string]redis.UniversalClient{"redis-server": redistest.Shared(t).Client(), "miniredis": mini} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			ns := "{" + redistest.Namespace(t) + "}:"
			seed := rdb.Pipeline()
			seed.Set(ctx, ns+"s", "v", 0)
			seed.HSet(ctx, ns+"h", "a", "1", "b", "2")
			seed.SAdd(ctx, ns+"set", "x", "y")
			seed.ZAdd(ctx, ns+"z", redis.Z{Score: 1, Member: "m"}, redis.Z{Score: 2, Member: "n"})
			seed.RPush(ctx, ns+"l", "p", "q")
			seed.Set(ctx, "outside-"+ns, "v", 0)
			if _, err := seed.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			before := redistest.Snapshot(t, rdb, ns+"*")
			if len(before) != 5 {
				t.Fatalf("snapshot of 5 keys = %v", before)
			}
			if after := redistest.Snapshot(t, rdb, ns+"*", ns+"s"); !maps.Equal(before, after) {
				t.Fatalf("snapshots of unchanged data differ:\n%v\n%v", before, after)
			}
			rdb.Set(ctx, "outside-"+ns, "w", 0)
			if after := redistest.Snapshot(t, rdb, ns+"*"); !maps.Equal(before, after) {
				t.Errorf("a key outside the pattern changed the snapshot:\n%v\n%v", before, after)
			}
			for what, change := range map[string]func() error{
				"string": func() error { return rdb.Set(ctx, ns+"s", "w", 0).Err() },
				"hash":   func() error { return rdb.HSet(ctx, ns+"h", "b", "3").Err() },
				"set":    func() error { return rdb.SAdd(ctx, ns+"set", "z").Err() },
				"zset":   func() error { return rdb.ZAdd(ctx, ns+"z", redis.Z{Score: 3, Member: "m"}).Err() },
				"list":   func() error { return rdb.LSet(ctx, ns+"l", 0, "r").Err() },
				"expiry": func() error { return rdb.Expire(ctx, ns+"l", time.Hour).Err() },
				"new":    func() error { return rdb.Set(ctx, ns+"new", "v", 0).Err() },
			} {
				if err := change(); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				after := redistest.Snapshot(t, rdb, ns+"*")
				if maps.Equal(before, after) {
					t.Errorf("changing the %s left the snapshot equal:\n%v", what, after)
				}
				before = after
			}
		})
	}
}
