package main

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/config"
	"github.com/ocyless/ocyless/shared/redistest"
	"github.com/ocyless/ocyless/shared/release"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ocypod.toml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestArgs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for _, args := range [][]string{{"-V"}, {"--version"}, {"cfg.toml", "-V"}} {
		var out strings.Builder
		if err := run(ctx, args, envOf(nil), &out, io.Discard); err != nil || out.String() != "ocypod-local "+release.Version+" (Ocypod API 0.8.0)\n" {
			t.Errorf("run(%q) = %v, stdout %q; want ocypod-local %s (Ocypod API 0.8.0)", args, err, out.String(), release.Version)
		}
	}
	for _, args := range [][]string{{"-h"}, {"--help"}} {
		var out strings.Builder
		err := run(ctx, args, envOf(nil), &out, io.Discard)
		if err != nil || !strings.Contains(out.String(), "Usage: ocypod-local [CONFIG_PATH]") {
			t.Errorf("run(%q) = %v, stdout %q; want the usage", args, err, out.String())
		}
		for _, v := range config.EnvVars() {
			if !strings.Contains(out.String(), v.Name) {
				t.Errorf("--help does not mention %s", v.Name)
			}
		}
	}
	for args, want := range map[string]string{
		"-x":        "error: unexpected argument '-x'",
		"--port=1":  "error: unexpected argument '--port=1'",
		"a.toml b":  "error: unexpected argument 'b'",
		"-- a.toml": "Failed to parse config file a.toml: no such file or directory",
	} {
		err := run(ctx, strings.Fields(args), envOf(nil), io.Discard, io.Discard)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("run(%q) error = %v, want prefix %q", args, err, want)
		}
	}
}

func TestStartupErrors(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	tests := map[string]struct {
		file string
		env  map[string]string
		want string
	}{
		"toml":          {"[server", nil, "Failed to parse config file %s: toml: line 1"},
		"interpolation": {"port = ${NOPE}", nil, "Failed to parse config file %s: could not interpolate environment variables into config, the following variables were not set: NOPE"},
		"queue name":    {"[queue.\"a b\"]", nil, "Failed to parse config file %s: [queue.\"a b\"]: Invalid queue name, valid characters: a-zA-Z0-9_.-"},
		"shutdown":      {"server.shutdown_timeout = \"1day\"", nil, "Maximum shutdown_timeout is 65535 seconds"},
		"env":           {"", map[string]string{"OCYPOD_PORT": "x"}, `OCYPOD_PORT: expected a port number 0..65535, got "x"`},
		"iam env": {"[redis]\nurl = \"rediss://h:6379\"\niam_user = \"u\"\ncache_name = \"c\"", nil,
			"Failed to initialise Redis connection pool: iamauth: AWS_REGION is not set"},
		"redis down": {"[redis]\nurl = \"redis://:hunter2-secret@127.0.0.1:1\"\ntimeout = \"200ms\"\n[queue.q]", nil,
			"Failed to initialise queues from configuration file: "},
		"allowed_hosts": {"[server]\nallowed_hosts = [\"http://x\"]", nil,
			`Failed to parse config file %s: server.allowed_hosts: entry 1 "http://x": a host name, not a URL`},
		"allowed_hosts env": {"", map[string]string{"OCYPOD_ALLOWED_HOSTS": "localhost,a/b"}, `OCYPOD_ALLOWED_HOSTS: entry 2 "a/b": a host name with an optional port only`},
		"embedded memory":   {"[redis]\nembedded_max_memory = \"lots\"", nil, "Failed to parse config file %s: redis.embedded_max_memory: Unable to parse size 'lots'"},
		"embedded memory env": {"", map[string]string{"OCYPOD_EMBEDDED_MAX_MEMORY": "10kB"},
			"redis.embedded_max_memory (OCYPOD_EMBEDDED_MAX_MEMORY) must be at least 1MiB, got 10000B"},
		"bind": {"[server]\nport = ${BUSY}\n[redis]\nurl = \"redis://127.0.0.1:1\"", nil, "listen tcp 127.0.0.1:"},
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, busyPort, _ := net.SplitHostPort(busy.Addr().String())
	for name, tt := range tests {
		if tt.env == nil {
			tt.env = map[string]string{"BUSY": busyPort}
		}
		p := writeFile(t, tt.file)
		logs := &syncBuffer{}
		err := run(ctx, []string{p}, envOf(tt.env), io.Discard, logs)
		want := strings.Replace(tt.want, "%s", p, 1)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: run error = %v, want prefix %q", name, err, want)
		}
		if err != nil && strings.Contains(err.Error()+logs.String(), "hunter2") {
			t.Errorf("%s: the Redis password shows in %v\n%s", name, err, logs)
		}
	}
}

// TestSecretsNotLogged runs the server against a password-protected
// redis-server and checks that neither the logs nor a login failure show the
// password.
func TestSecretsNotLogged(t *testing.T) {
	t.Parallel()
	srv, err := redistest.StartServer(redistest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ctx := t.Context()
	const pass = "hunter2-very-secret"
	if err := srv.Client().Do(ctx, "CONFIG", "SET", "requirepass", pass).Err(); err != nil {
		t.Fatal(err)
	}
	sock := strings.TrimPrefix(srv.URL(), "unix://")

	file := "[server]\nport = 0\nlog_level = \"trace\"\n[redis]\nurl = \"unix://:${PASS}@" + sock + "\"\n[queue.q]\n"
	s := start(t, file, map[string]string{"PASS": pass})
	if code, body := s.do(t, "GET", "/queue/q", ""); code != 200 {
		t.Errorf("GET /queue/q = %d %s", code, body)
	}
	if err := s.stop(t); err != nil {
		t.Errorf("run = %v", err)
	}
	if strings.Contains(s.logs.String(), pass) {
		t.Errorf("logs show the password:\n%s", s.logs)
	}
	if !strings.Contains(s.logs.String(), "unix://REDACTED@") {
		t.Errorf("logs do not show the redacted URL:\n%s", s.logs)
	}

	logs := &syncBuffer{}
	err = run(ctx, []string{writeFile(t, file)}, envOf(map[string]string{"PASS": "wrong-" + pass}), io.Discard, logs)
	if err == nil || !strings.HasPrefix(err.Error(), "Failed to initialise queues from configuration file: ") {
		t.Fatalf("run with a wrong password = %v", err)
	}
	if strings.Contains(err.Error()+logs.String(), pass) {
		t.Errorf("a login failure shows the password: %v\n%s", err, logs)
	}
}

// TestShutdownTimeout checks that run returns once shutdown_timeout has
// passed even when a request is still running.
func TestShutdownTimeout(t *testing.T) {
	t.Parallel()
	s := start(t, "[server]\nport = 0\nshutdown_timeout = \"0s\"\nnext_job_delay = \"3s\"\n[queue.empty]\n", nil)
	got := s.inFlight(t, "GET", "/queue/empty/job")
	begin := time.Now()
	if err := s.stop(t); err != nil {
		t.Errorf("run = %v, want nil", err)
	}
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("shutdown took %s with shutdown_timeout 0s", d)
	}
	<-got
}

// TestExampleConfig keeps ocypod.example.toml valid and equal to the
// defaults.
func TestExampleConfig(t *testing.T) {
	t.Parallel()
	c, err := config.Load("ocypod.example.toml", envOf(nil))
	if err != nil {
		t.Fatalf("Load(ocypod.example.toml) error = %v", err)
	}
	d := config.Default()
	if !reflect.DeepEqual(c.Server, d.Server) || c.Redis != d.Redis || c.Sweep != d.Sweep || len(c.Queues) != 1 {
		t.Errorf("ocypod.example.toml = %v, want the defaults plus queue default", c)
	}
}
