package httpapi

import (
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/redisstore"
)

// closedPort returns a loopback port nothing listens on.
func closedPort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// TestRedisDown: with Redis unreachable every route that needs it answers
// 503 with a message (and no credentials) within a bounded time; what needs
// no Redis still works.
func TestRedisDown(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-pass"
	rdb, err := redisstore.NewClient(redisstore.ClientOptions{
		URL:         "redis://user:" + secret + "@127.0.0.1:" + strconv.Itoa(closedPort(t)),
		DialTimeout: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	store, err := redisstore.New(rdb, redisstore.Options{Namespace: "down"})
	if err != nil {
		t.Fatal(err)
	}
	logs := &logRecorder{}
	h := New(store, Options{Logger: slog.New(logs)}).Handler()

	const prefix = "Failed to connect to Redis: "
	t.Run("routes", func(t *testing.T) {
		for _, rt := range Routes() {
			if !NeedsStore(rt.Name) {
				continue
			}
			t.Run(rt.Name, func(t *testing.T) {
				t.Parallel()
				path, body := sample(rt)
				start := time.Now()
				w := do(h, rt.Method, path, body)
				if d := time.Since(start); d > 3*time.Second {
					t.Errorf("took %v with Redis down, want at most 3s", d)
				}
				b, ct := w.Body.String(), w.Header().Get("Content-Type")
				switch {
				case w.Code != http.StatusServiceUnavailable || strings.Contains(b, secret):
					t.Errorf("%s %s = %d %q, want 503 without the password", rt.Method, rt.Pattern, w.Code, b)
				case rt.Name == "health":
					if ct != jsonType || !strings.HasPrefix(b, `{"status":"unhealthy","error":"`+prefix) || !strings.HasSuffix(b, `"}`) {
						t.Errorf("GET /health = %q (%s), want the unhealthy JSON", b, ct)
					}
				case !strings.HasPrefix(b, prefix) || ct != textType:
					t.Errorf("%s %s = %q (%s), want text %q...", rt.Method, rt.Pattern, b, ct, prefix)
				}
			})
		}
	})

	// No Redis needed: the version, and refusals decided before Redis.
	wantJSON(t, do(h, http.MethodGet, "/info/version", ""), http.StatusOK, `"0.8.0"`)
	if w := do(h, http.MethodGet, "/ui", ""); w.Code != http.StatusOK {
		t.Errorf("GET /ui = %d, want 200: the page needs no Redis", w.Code)
	}
	wantText(t, do(h, http.MethodGet, "/queue/bad%20name/size", ""), http.StatusBadRequest, invalidName)
	wantText(t, do(h, http.MethodGet, "/job/x", ""), http.StatusNotFound, `can not parse "x" to a u64`)
	wantText(t, do(h, http.MethodPut, "/queue/q", `{"retries":-1}`), http.StatusBadRequest,
		jsonErr+"invalid value: integer `-1`, expected u64 at line 1 column 14")

	// Each failure is logged once, at Error, without the password.
	lines := logs.lines()
	if want := len(Routes()) - len(storeless); len(lines) != want {
		t.Errorf("%d log lines, want %d (one per failed request)", len(lines), want)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "ERROR request failed") || !strings.Contains(l, "status=503") || strings.Contains(l, secret) {
			t.Errorf("log line %q, want an ERROR with status=503 and no password", l)
		}
	}
}
