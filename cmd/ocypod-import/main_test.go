package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
	"github.com/ocyless/ocyless/shared/release"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// upstream writes a small database in upstream Ocypod 0.8's key layout
// under namespace ns: queue q with a queued, a running and a completed job,
// and the statistics.
func upstream(t *testing.T, rdb redis.UniversalClient, ns string) {
	t.Helper()
	ctx := t.Context()
	p := ns + ":"
	const at = "2024-03-01T10:00:00.123456789+00:00"
	job := func(id, status string, extra ...any) {
		args := append([]any{"HSET", p + "job:" + id, "id", id, "queue", "q", "status", status, "created_at", at,
			"timeout", 300, "heartbeat_timeout", 0, "expires_after", 0, "retries", 1, "retries_attempted", 0}, extra...)
		if err := rdb.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range [][]any{
		{"SADD", p + "queues", "q"},
		{"HSET", p + "queue:q", "timeout", 300, "heartbeat_timeout", 0, "expires_after", 0, "retries", 1, "retry_delays", `["1m"]`},
		{"SET", p + "job_id", 3},
		{"LPUSH", p + "queue:q:jobs", 1},
		{"RPUSH", p + "running", 2},
		{"LPUSH", p + "ended", 3},
		{"SET", p + "stats:jobs:num_created", 3},
		{"SET", p + "stats:jobs:num_completed", 1},
	} {
		if err := rdb.Do(ctx, c...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	job("1", "queued", "input", `{"a":1}`, "tags", `["t"]`)
	job("2", "running", "started_at", at)
	job("3", "completed", "started_at", at, "ended_at", at, "output", `[1,2]`)
}

// env is a fake environment.
func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// target is a test's target namespace on the shared server.
type target struct {
	srv *redistest.Server
	ns  string
}

func newTarget(t *testing.T) target {
	return target{srv: redistest.Shared(t), ns: redistest.Namespace(t)}
}

func (tg target) env() func(string) (string, bool) {
	return env("OCYPOD_REDIS_URL", tg.srv.URL(), "OCYPOD_KEY_NAMESPACE", tg.ns)
}

func (tg target) store(t *testing.T, partitions int) *redisstore.Store {
	s, err := redisstore.New(tg.srv.Client(), redisstore.Options{Namespace: tg.ns, Partitions: partitions})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// keys counts the target namespace's keys.
func (tg target) keys(t *testing.T) int {
	n := 0
	for _, pat := range []string{"{" + tg.ns + "}:*", "{" + tg.ns + ":*"} {
		ks, err := tg.srv.Client().Keys(t.Context(), pat).Result()
		if err != nil {
			t.Fatal(err)
		}
		n += len(ks)
	}
	return n
}

func runCmd(t *testing.T, ctx context.Context, getenv func(string) (string, bool), stderr *syncBuffer, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	if stderr == nil {
		stderr = &syncBuffer{}
	}
	err := run(ctx, args, getenv, &out, stderr)
	return out.String(), err
}

// syncBuffer is an io.Writer tests read while the command writes.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	onWrite func()
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.onWrite != nil {
		s.onWrite()
	}
	return s.b.Write(p)
}

var tableRow = regexp.MustCompile(`(?m)^\s*q\s+1\s+1\s+0\s+0\s+1\s+0\s+3\s*$`)

func TestImport(t *testing.T) {
	t.Parallel()
	src := redistest.Shared(t)
	ns := "up-" + redistest.Namespace(t)
	upstream(t, src.Client(), ns)
	tg := newTarget(t)
	out, err := runCmd(t, t.Context(), tg.env(), nil, "-from", src.URL(), "-from-namespace", ns)
	if err != nil {
		t.Fatalf("run = %v\n%s", err, out)
	}
	for _, want := range []string{"Jobs copied: 3", "Queues: 1, with their settings: q", "Statistics (/info): created 3, completed 1",
		"last job id is 3", "Done: the import is complete."} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if !tableRow.MatchString(out) {
		t.Errorf("report lacks the row of queue q:\n%s", out)
	}
	s := tg.store(t, 1)
	for id, st := range map[uint64]ocypod.Status{1: ocypod.StatusQueued, 2: ocypod.StatusRunning, 3: ocypod.StatusCompleted} {
		if j, err := s.GetJob(t.Context(), id); err != nil || j.Status != st {
			t.Errorf("job %d = %+v, %v, want %s", id, j, err, st)
		}
	}
	if n, err := s.NextJob(t.Context(), "q"); err != nil || n == nil || n.ID != 1 || string(n.Input) != `{"a":1}` {
		t.Errorf("NextJob = %+v, %v", n, err)
	}
	out, err = runCmd(t, t.Context(), tg.env(), nil, "-from", src.URL(), "-from-namespace", ns)
	if err != nil || !strings.Contains(out, "Nothing to do") {
		t.Errorf("second run = %v\n%s", err, out)
	}
}

func TestImportConfigPartitions(t *testing.T) {
	t.Parallel()
	src := redistest.Shared(t)
	ns := "up-" + redistest.Namespace(t)
	upstream(t, src.Client(), ns)
	tg := newTarget(t)
	cfg := filepath.Join(t.TempDir(), "ocypod.toml")
	text := "[redis]\nurl = \"" + tg.srv.URL() + "\"\nkey_namespace = \"" + tg.ns + "\"\npartitions = 4\n"
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runCmd(t, t.Context(), env(), nil, "-from", src.URL(), "-from-namespace", ns, "-config", cfg, "-batch", "1")
	if err != nil || !strings.Contains(out, "4 partition(s)") {
		t.Fatalf("run = %v\n%s", err, out)
	}
	s := tg.store(t, 4)
	if _, err := s.Open(t.Context()); err != nil {
		t.Fatalf("Open after the import = %v", err)
	}
	for id := uint64(1); id <= 3; id++ {
		if j, err := s.GetJob(t.Context(), id); err != nil || j.ID != id {
			t.Errorf("GetJob(%d) = %+v, %v", id, j, err)
		}
	}
	c, err := s.CreateJob(t.Context(), "q", ocypod.JobSpec{})
	if err != nil || c.ID <= 3 {
		t.Errorf("CreateJob = %+v, %v, want an id above 3", c, err)
	}
}

func TestImportDryRun(t *testing.T) {
	t.Parallel()
	src := redistest.Shared(t)
	ns := "up-" + redistest.Namespace(t)
	upstream(t, src.Client(), ns)
	tg := newTarget(t)
	out, err := runCmd(t, t.Context(), tg.env(), nil, "-from", src.URL(), "-from-namespace", ns, "-dry-run")
	if err != nil || !strings.Contains(out, "Dry run: nothing was written") || !strings.Contains(out, "Jobs to copy: 3") || !tableRow.MatchString(out) {
		t.Fatalf("run = %v\n%s", err, out)
	}
	if n := tg.keys(t); n != 0 {
		t.Errorf("a dry run wrote %d keys", n)
	}
}

func TestImportInterrupted(t *testing.T) {
	t.Parallel()
	src := redistest.Shared(t)
	ns := "up-" + redistest.Namespace(t)
	upstream(t, src.Client(), ns)
	tg := newTarget(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// The first progress line (after the first step) stops the run, as
	// Ctrl-C would.
	stderr := &syncBuffer{onWrite: cancel}
	out, err := runCmd(t, ctx, tg.env(), stderr, "-from", src.URL(), "-from-namespace", ns, "-batch", "1")
	if err == nil || !strings.Contains(err.Error(), "run it again") || !strings.Contains(out, "Jobs copied: 1") ||
		!strings.Contains(out, "Stopped before the end") {
		t.Fatalf("interrupted run = %v\n%s", err, out)
	}
	out, err = runCmd(t, t.Context(), tg.env(), nil, "-from", src.URL(), "-from-namespace", ns, "-batch", "1")
	if err != nil || !strings.Contains(out, "Resumed: the source's jobs up to id 1") || !strings.Contains(out, "Jobs copied: 2") {
		t.Fatalf("resumed run = %v\n%s", err, out)
	}
}

func TestImportRefusals(t *testing.T) {
	t.Parallel()
	src := redistest.Shared(t)
	ns := "up-" + redistest.Namespace(t)
	upstream(t, src.Client(), ns)
	var u usageError
	for _, args := range [][]string{{}, {"-from"}, {"-from", src.URL(), "extra"}, {"-from", src.URL(), "-batch", "0"}, {"-nope"}} {
		if _, err := runCmd(t, t.Context(), env(), nil, args...); !errors.As(err, &u) {
			t.Errorf("run %q = %v, want a usage error", args, err)
		}
	}
	if _, err := runCmd(t, t.Context(), env(), nil, "-from", src.URL()); err == nil || !strings.Contains(err.Error(), "needs a Redis URL") {
		t.Errorf("run without a target = %v", err)
	}
	tg := newTarget(t)
	out, err := runCmd(t, t.Context(), tg.env(), nil, "-from", src.URL(), "-from-namespace", ns+"-none")
	if err == nil || !strings.Contains(err.Error(), "holds no Ocypod data") || out != "" {
		t.Errorf("run from a non-Ocypod source = %v\n%s", err, out)
	}
	if _, err := tg.store(t, 1).PutQueue(t.Context(), "mine", ocypod.QueueSettings{}); err != nil {
		t.Fatal(err)
	}
	before := tg.keys(t)
	if _, err := runCmd(t, t.Context(), tg.env(), nil, "-from", src.URL(), "-from-namespace", ns); err == nil ||
		!strings.Contains(err.Error(), "already holds data") {
		t.Errorf("run into a namespace with data = %v", err)
	}
	if n := tg.keys(t); n != before {
		t.Errorf("a refused run changed the target: %d keys, had %d", n, before)
	}
	// A password never shows.
	out, err = runCmd(t, t.Context(), tg.env(), nil, "-from", "redis://user:s3cret@127.0.0.1:1/0", "-dry-run")
	if err == nil || strings.Contains(err.Error()+out, "s3cret") {
		t.Errorf("run with an unreachable source = %v\n%s", err, out)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	out, err := runCmd(t, t.Context(), env(), nil, "-version")
	if want := "ocypod-import " + release.Version + "\n"; err != nil || out != want {
		t.Errorf("-version = %v, %q; want %q", err, out, want)
	}
}

// TestMakeImport runs `make import` as a user does.
func TestMakeImport(t *testing.T) {
	t.Parallel()
	makePath, err := exec.LookPath("make")
	if err != nil {
		t.Fatalf("make is needed for this test: %v", err)
	}
	src := redistest.Shared(t)
	ns := "up-" + redistest.Namespace(t)
	upstream(t, src.Client(), ns)
	tg := newTarget(t)
	cfg := filepath.Join(t.TempDir(), "ocypod.toml")
	text := "[redis]\nurl = \"" + tg.srv.URL() + "\"\nkey_namespace = \"" + tg.ns + "\"\n"
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), makePath, "--no-print-directory", "-C", "../..", "import")
	cmd.Env = cleanEnv()
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "FROM is not set") {
		t.Errorf("make import without FROM = %v\n%s", err, out)
	}
	cmd = exec.CommandContext(t.Context(), makePath, "--no-print-directory", "-C", "../..", "import",
		"FROM="+src.URL(), "FROM_NAMESPACE="+ns, "CONFIG="+cfg)
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil || !tableRow.Match(out) || !strings.Contains(string(out), "Done: the import is complete.") {
		t.Fatalf("make import = %v\n%s", err, out)
	}
}

// cleanEnv is the environment without OCYPOD_* variables, so the test's
// configuration is the only one.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OCYPOD_") {
			out = append(out, kv)
		}
	}
	return out
}
