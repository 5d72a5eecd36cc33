package main

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redisstore/upgradetest"
	"github.com/ocyless/ocyless/shared/redistest"
)

// wantUpgraded fails t unless ns has the current layout (and, if job1,
// version 1's job 1).
func wantUpgraded(t *testing.T, rdb redis.UniversalClient, ns string, job1 bool) {
	t.Helper()
	ctx := t.Context()
	if v := rdb.HGet(ctx, "{"+ns+"}:meta", "version").Val(); v != "4" {
		t.Errorf("layout version = %q, want 4: the upgrade did not finish", v)
	}
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	if info, err := s.Open(ctx); err != nil || info.Upgrade {
		t.Errorf("Open = %+v, %v, want the upgrade finished", info, err)
	}
	if !job1 {
		return
	}
	j, err := s.GetJob(ctx, 1)
	if err != nil || j.Queue != "mail" {
		t.Errorf("job 1 = %+v, %v, want version 1's job 1 of queue mail", j, err)
	}
}

// TestServeWaitsForKilledUpgrade: a server started while a killed
// upgrader's lock is held waits for the lease to lapse, finishes the
// upgrade, and only then serves: a create gets a fresh id.
func TestServeWaitsForKilledUpgrade(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	ns := redistest.Namespace(t)
	upgradetest.HalfUpgraded(t, srv.Client(), ns, 1500*time.Millisecond)
	env := map[string]string{"REDIS_URL": srv.URL(), "NS": ns}
	file := "[server]\nport = 0\nlog_level = \"debug\"\n[redis]\nurl = \"${REDIS_URL}\"\nkey_namespace = \"${NS}\"\n"
	s := start(t, file, env)
	// (The server's sweeps may expire version 1's old jobs from now on.)
	wantUpgraded(t, srv.Client(), ns, false)
	if !strings.Contains(s.logs.String(), "Another process is upgrading") {
		t.Errorf("no line saying the server waits for the other upgrader:\n%s", s.logs)
	}
	_, body := s.do(t, "POST", "/queue/mail/job", `{"input":"new"}`)
	var id uint64
	if err := json.Unmarshal([]byte(body), &id); err != nil || id <= 15 {
		t.Errorf("POST /queue/mail/job = %s, want an id above version 1's 15", body)
	}
}

// TestMigrateAfterKilledUpgrade: make migrate (--upgrade) started while a
// killed upgrader's lock is held takes over and finishes (exit 0 only
// then), or, stopped while it waits, fails (a non-zero exit).
func TestMigrateAfterKilledUpgrade(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	file := "[redis]\nurl = \"${REDIS_URL}\"\nkey_namespace = \"${NS}\"\n"
	t.Run("takes over", func(t *testing.T) {
		t.Parallel()
		ns := redistest.Namespace(t)
		upgradetest.HalfUpgraded(t, srv.Client(), ns, 1500*time.Millisecond)
		logs := &syncBuffer{}
		err := runWith(t.Context(), []string{"--upgrade", writeFile(t, file)},
			envOf(map[string]string{"REDIS_URL": srv.URL(), "NS": ns}), io.Discard, logs, hooks{})
		if err != nil {
			t.Fatalf("--upgrade = %v\n%s", err, logs)
		}
		wantUpgraded(t, srv.Client(), ns, true)
		if !strings.Contains(logs.String(), "Upgrade finished") {
			t.Errorf("no line saying the upgrade finished:\n%s", logs)
		}
	})
	t.Run("stopped while waiting", func(t *testing.T) {
		t.Parallel()
		ns := redistest.Namespace(t)
		upgradetest.HalfUpgraded(t, srv.Client(), ns, time.Minute)
		logs := &signalBuffer{want: "Another process is upgrading", seen: make(chan struct{})}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() {
			select {
			case <-logs.seen:
				cancel()
			case <-ctx.Done():
			}
		}()
		err := runWith(ctx, []string{"--upgrade", writeFile(t, file)},
			envOf(map[string]string{"REDIS_URL": srv.URL(), "NS": ns}), io.Discard, logs, hooks{})
		if err == nil || !strings.HasPrefix(err.Error(), "Failed to upgrade the namespace's layout (run it again to resume): ") {
			t.Fatalf("--upgrade stopped while another process's lock is held = %v, want a failure\n%s", err, logs.String())
		}
		if v := srv.Client().HGet(t.Context(), "{"+ns+"}:meta", "version").Val(); v != "" {
			t.Errorf("layout version = %q, want none yet", v)
		}
	})
}

// signalBuffer is a syncBuffer that closes seen once a write contains want.
type signalBuffer struct {
	syncBuffer
	want string
	seen chan struct{}
	done bool
}

func (b *signalBuffer) Write(p []byte) (int, error) {
	n, err := b.syncBuffer.Write(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done && strings.Contains(string(p), b.want) {
		b.done = true
		close(b.seen)
	}
	return n, err
}

// TestServeRedisDownAtStartThenUnfinishedUpgrade: a server started while
// its Redis was unreachable never checked the layout; once Redis is back
// with a namespace whose upgrade is unfinished, it answers 503 until the
// upgrade finishes, then serves.
func TestServeRedisDownAtStartThenUnfinishedUpgrade(t *testing.T) {
	t.Parallel()
	// (Persisted: the data comes back with the server.)
	srv, err := redistest.StartServer(redistest.Options{AppendOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ns := redistest.Namespace(t)
	upgradetest.HalfUpgraded(t, srv.Client(), ns, time.Minute)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	file := "[server]\nport = 0\nlog_level = \"debug\"\nexpiry_check_interval = \"100ms\"\n[redis]\nurl = \"${REDIS_URL}\"\nkey_namespace = \"${NS}\"\n"
	s := start(t, file, map[string]string{"REDIS_URL": srv.URL(), "NS": ns})
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if code, body := s.do(t, "POST", "/queue/mail/job", `{"input":"new"}`); code != 503 || !strings.Contains(body, "upgraded") {
		t.Errorf("POST /queue/mail/job during the upgrade = %d %s, want a 503", code, body)
	}
	// The sweeps wait too (the server's first passes ran while Redis was
	// down; the next ones find the upgrade unfinished).
	s.waitLog(t, "job expiry monitoring waits for it")
	srv.Client().Del(t.Context(), "{"+ns+"}:upgrade") // the dead upgrader's lease, cut short
	st, err := redisstore.New(srv.Client(), redisstore.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	if done, err := st.Upgrade(t.Context(), 0); !done || err != nil {
		t.Fatalf("Upgrade = %v, %v", done, err)
	}
	code, body := s.do(t, "POST", "/queue/mail/job", `{"input":"new"}`)
	var id uint64
	if err := json.Unmarshal([]byte(body), &id); code != 201 || err != nil || id <= 15 {
		t.Errorf("POST /queue/mail/job after the upgrade = %d %s, want an id above version 1's 15", code, body)
	}
}

// waitLog polls the server's logs until they contain want, for at most 20s.
func (s *testServer) waitLog(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(s.logs.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the logs:\n%s", want, s.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
