package main

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

// longPollFile has a small Redis pool and room for 24 waiting takes.
const longPollFile = `
[server]
host = "127.0.0.1"
port = 0
max_long_polls = 24

[redis]
url = "${REDIS_URL=}"
key_namespace = "${NS=}"
pool_size = 4
timeout = "5s"
`

// prompt bounds how soon the server must answer a request that waits for
// nothing (milliseconds when the machine is idle): below the Redis timeout
// (5s, after which a request starved of connections answers 503) and far
// below the takes' wait.
const prompt = 3 * time.Second

// TestLongPollsDoNotStarve: more waiting takes than the Redis pool has
// connections leave the server answering everything else at once, /health
// included; one more than max_long_polls answers 204 at once; when their
// clients hang up, the takes end and leave the pool as it was.
func TestLongPollsDoNotStarve(t *testing.T) {
	t.Parallel()
	for name, env := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := start(t, longPollFile, env)
			s.want(t, "PUT", "/queue/lp", "{}", 201, "")
			const waiters = 24
			ctx, hangUp := context.WithCancel(t.Context())
			defer hangUp()
			codes := make(chan int, waiters)
			for range waiters {
				go func() {
					req, _ := http.NewRequestWithContext(ctx, "GET", s.base+"/queue/lp/job?wait=8s", nil)
					resp, err := client.Do(req)
					if err != nil {
						codes <- 0
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					codes <- resp.StatusCode
				}()
			}
			// The server's own count of waiting takes: a real server's
			// requests, polled with a deadline.
			deadline := time.Now().Add(10 * time.Second)
			for s.store.LongPolls() < waiters {
				if time.Now().After(deadline) {
					t.Fatalf("%d of %d takes waiting", s.store.LongPolls(), waiters)
				}
				time.Sleep(10 * time.Millisecond)
			}

			timed := func(what, method, path, body string, want int) {
				t.Helper()
				start := time.Now()
				code, got := s.do(t, method, path, body)
				if el := time.Since(start); code != want || el > prompt {
					t.Fatalf("%s with %d takes waiting: %s %s = %d %q after %v, want %d within %v",
						what, waiters, method, path, code, got, el, want, prompt)
				}
			}
			timed("health", "GET", "/health", "", 200)
			timed("a take past max_long_polls", "GET", "/queue/lp/job?wait=8s", "", 204)
			start := time.Now()
			timed("create", "POST", "/queue/lp/job", "{}", 201)
			if code := <-codes; code != 200 || time.Since(start) > prompt {
				t.Fatalf("the take woken by the create = %d after %v", code, time.Since(start))
			}

			// The other clients hang up.
			hangUp()
			for range waiters - 1 {
				<-codes
			}
			deadline = time.Now().Add(prompt)
			for s.store.LongPolls() > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("%d takes still waiting %v after their clients hung up", s.store.LongPolls(), prompt)
				}
				time.Sleep(10 * time.Millisecond)
			}
			timed("health after the hang-ups", "GET", "/health", "", 200)
			if st := s.rdb.PoolStats(); st.TotalConns > 4 || st.IdleConns != st.TotalConns {
				t.Fatalf("Redis pool after the hang-ups: %d connections, %d idle (pool_size 4)", st.TotalConns, st.IdleConns)
			}
		})
	}
}
