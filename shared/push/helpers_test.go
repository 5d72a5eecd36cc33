package push

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// logBuffer captures every log line (debug included) as JSON text.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func captureLog() (*slog.Logger, *logBuffer) {
	lb := &logBuffer{}
	return slog.New(slog.NewJSONHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug})), lb
}

// fixedClock is a settable clock for signatures and Retry-After.
type fixedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fixedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// fakeResolver answers from a table, as a DNS server under test control.
type fakeResolver map[string][]string

func (r fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, s := range r[strings.ToLower(host)] {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

const testSecret = "s3cr3t-K3y-th4t-must-n0t-leak"

func testTarget(url string, batch int) *Target {
	return &Target{URL: url, Batch: batch, Concurrency: 10, Secret: SecretFrom([]byte(testSecret))}
}

func localPolicy(t *testing.T) *Policy {
	t.Helper()
	p, err := NewPolicy(nil, Local)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func job(id uint64, input string) Job {
	return Job{ID: id, Attempt: 1, Queue: "q", Input: []byte(input)}
}

func bufioReader(r io.Reader) *bufio.Reader { return bufio.NewReader(r) }
