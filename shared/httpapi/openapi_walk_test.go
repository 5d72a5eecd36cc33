package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// step is one request of the walk and the status it must get.
type step struct {
	method, path, body string
	want               int
}

// walkSteps drive every route on the real store, from a fresh namespace
// (job ids 1, 2, 3... in creation order), through its answers: successes
// in each of their shapes, and the refusals the store decides.
var walkSteps = []step{
	{"GET", "/health", "", 200},
	{"GET", "/info/version", "", 200},
	{"GET", "/openapi.json", "", 200},
	{"GET", "/info", "", 200},
	{"GET", "/queue", "", 200},

	{"PUT", "/queue/q", `{"timeout":"10m","retries":1}`, 201},
	{"PUT", "/queue/q", `{"timeout":"10m","retries":1,"retry_delays":["1s","1h 30m"]}`, 204},
	{"PUT", "/queue/dlq", `{}`, 201},
	{"PUT", "/queue/q", `{"timeout":"10m","retries":1,"dead_letter_queue":"nope"}`, 404},
	{"PATCH", "/queue/q", `{"concurrency":0,"rate_limit":{"per_second":1000,"burst":100},"retry_backoff":null,` +
		`"timeout_retries":2,"dead_letter_queue":"dlq"}`, 204},
	{"PATCH", "/queue/nope", `{}`, 404},
	{"PATCH", "/queue/q", `{"concurrency":"x"}`, 400},
	{"GET", "/queue/q", "", 200},
	{"GET", "/queue/nope", "", 404},
	{"GET", "/queue", "", 200},
	{"GET", "/queue/nope/size", "", 404},
	{"GET", "/queue/nope/job_ids", "", 404},
	{"PUT", "/queue/pq", `{"push":{"url":"http://127.0.0.1:9/jobs","batch":2,"timeout":"10s"}}`, 201},
	{"PATCH", "/queue/pq", `{"callback":{"url":"http://localhost:9/done","on":["completed"]}}`, 204},
	{"GET", "/queue/pq", "", 200},
	{"GET", "/queue/pq/job", "", 409},
	{"GET", "/job?queues=q,pq", "", 409},
	{"PATCH", "/jobs?take=pq", `[{"id":1,"tracked":false}]`, 409},

	{"POST", "/queue/q/job", `{"input":{"b":[1,2.50],"a":null},"tags":["t"]}`, 201}, // 1
	{"POST", "/queue/q/job", `{"key":"k1","priority":5,"retry_backoff":{"min":"1s","max":"1m","factor":3,"jitter":false}}`, 201},
	{"POST", "/queue/q/job", `{"key":"k1","on_conflict":"update","priority":6,"update_run_at":"never"}`, 200}, // 2 again
	{"POST", "/queue/q/job", `{"key":"k1","on_conflict":"error"}`, 409},
	{"POST", "/queue/nope/job", `{}`, 404},
	{"POST", "/queue/q/job", `{"tags":[""]}`, 400},
	{"POST", "/queue/q/job", `{"run_at":"2030-01-01T00:00:00+02:00","tracked":true,"timeout_retries":1}`, 201}, // 3, scheduled
	{"POST", "/queue/q/job", `{"depends_on":[1],"delay":null}`, 201},                                           // 4, waiting
	{"POST", "/queue/q/jobs", `[{"input":1},{"input":"two","timeout":"1s","expires_after":"1h"}]`, 201},        // 5, 6
	{"POST", "/queue/nope/jobs", `[{}]`, 404},
	{"POST", "/queue/q/jobs", `[{"key":"k1","on_conflict":"error"}]`, 409},
	{"POST", "/queue/q/jobs", `[]`, 400},
	{"GET", "/queue/q/size", "", 200},
	{"GET", "/queue/q/job_ids", "", 200},
	{"GET", "/info", "", 200},

	{"GET", "/job/1", "", 200},
	{"GET", "/job/2", "", 200},
	{"GET", "/job/3", "", 200},
	{"GET", "/job/4?fields=id,status,depends_on,dependents,attempt,history,worker,error", "", 200},
	{"GET", "/job/1?fields=dependents,tags,retry_delays,run_at,key,retry_backoff,timeout_retries", "", 200},
	{"GET", "/job/99", "", 404},
	{"GET", "/job/1?fields=nope", "", 400},
	{"GET", "/job/1/status", "", 200},
	{"GET", "/job/99/status", "", 404},
	{"GET", "/job/1/output", "", 200},
	{"GET", "/job/99/output", "", 404},
	{"GET", "/tag/t", "", 200},
	{"GET", "/tag/none", "", 200},

	{"GET", "/queue/q/job", "", 200},                           // 2 (priority 6), Ocypod's shape
	{"GET", "/queue/q/job?worker=w1", "", 200},                 // 1, a take object
	{"GET", "/queue/q/job?count=3&worker=w1&wait=0s", "", 200}, // [5, 6]
	{"GET", "/queue/q/job", "", 204},
	{"GET", "/queue/nope/job", "", 404},
	{"GET", "/queue/q/job?count=0", "", 400},
	{"GET", "/job?queues=dlq,q&order=round_robin&wait=0s", "", 204},
	{"GET", "/job?queues=q,nope", "", 404},
	{"GET", "/job", "", 400},

	{"PUT", "/job/1/heartbeat?attempt=1", "", 204},
	{"PUT", "/job/1/heartbeat?attempt=2", "", 409},
	{"PUT", "/job/99/heartbeat", "", 404},
	{"PUT", "/job/1/heartbeat?attempt=x", "", 400},
	{"PUT", "/job/1/output?attempt=1", `{"progress":0.5}`, 204},
	{"PUT", "/job/1/output", `null`, 204},
	{"PUT", "/job/3/output", `1`, 409},
	{"PUT", "/job/99/output", `1`, 404},
	{"PUT", "/job/1/output?attempt=-1", `1`, 400},
	{"GET", "/workers", "", 200},
	{"GET", "/workers/w1", "", 200},
	{"GET", "/workers/nobody", "", 404},
	{"GET", "/workers/%01", "", 400},

	{"PATCH", "/job/1?attempt=1", `{"status":"completed","output":{"done":true}}`, 204}, // 4 is queued now
	{"PATCH", "/job/1", `{"status":"queued"}`, 409},
	{"PATCH", "/job/99", `{}`, 404},
	{"PATCH", "/job/1?count=2", `{}`, 400},
	{"PATCH", "/job/2", `{"status":"failed","error":{"group":"io","message":"disk full"},"retry":false}`, 204}, // 7 in dlq
	{"PATCH", "/job/5", `{"status":"completed","next":{"queue":"q","input":"next","tags":["t"]}}`, 201},        // 8
	{"PATCH", "/job/6?take=q&worker=w2", `{"status":"completed"}`, 200},                                        // takes 4
	{"PATCH", "/job/4?take=q&count=2", `{"status":"completed"}`, 200},                                          // takes [8]
	{"PATCH", "/job/8?take=q&wait=0s", `{"status":"cancelled"}`, 204},
	{"PATCH", "/job/3", `{"priority":3,"tags":["s"],"tracked":false}`, 204},
	{"PATCH", "/job/3", `{"status":"timed_out"}`, 409},
	{"PATCH", "/job/3?take=nope", `{"status":"cancelled"}`, 404},
	{"PATCH", "/jobs", `[{"id":3,"priority":3},{"id":99,"status":"completed"},{"id":1,"attempt":1,"status":"failed"},{"id":3,"nope":1}]`, 200},
	{"PATCH", "/jobs?take=q&count=2&worker=w3&wait=0s", `[{"id":3,"tracked":false}]`, 200}, // nothing to take
	{"PATCH", "/jobs?take=nope", `[{"id":3,"status":"cancelled"}]`, 404},
	{"PATCH", "/jobs", `[]`, 400},
	{"POST", "/jobs/heartbeat", `[{"id":1,"attempt":1},{"id":99}]`, 200},
	{"POST", "/jobs/heartbeat", `[{"attempt":1}]`, 400},

	{"GET", "/failures", "", 200},
	{"GET", "/failures/io", "", 200},
	{"GET", "/failures/io?limit=1&fields=id,error", "", 200},
	{"GET", "/failures/nothing", "", 200},
	{"GET", "/failures/io?limit=0", "", 400},
	{"POST", "/failures/io/retry", `{"queue":"nope"}`, 404},
	{"POST", "/failures/io/retry?limit=x", "", 400},
	{"POST", "/failures/io/retry?limit=10", `{"queue":"q"}`, 200}, // 2 is queued again
	{"POST", "/failures/io/retry", "", 200},

	{"POST", "/job/1/retry", "", 409},
	{"POST", "/job/99/retry", "", 404},
	{"POST", "/job/1/retry", `{"delay":"x"}`, 400},
	{"GET", "/job?queues=dlq,q", "", 200},                   // 7, the dead letter of 2
	{"GET", "/job?queues=q,dlq&count=2&worker=w3", "", 200}, // [2]
	{"POST", "/job/2/retry", `{"delay":"1h"}`, 200},
	{"POST", "/job/8/retry", `{"run_at":"2030-01-01T00:00:00Z"}`, 200},

	{"GET", "/jobs", "", 200},
	{"GET", "/jobs?limit=1&status=completed&fields=id,status,ended", "", 200},
	{"GET", "/jobs?tracked=true&tag=t&worker=w1", "", 200},
	{"GET", "/jobs?limit=0", "", 400},
	{"GET", "/jobs?limit=1", "", 200},
	{"GET", "/jobs?limit=1&cursor={cursor}", "", 200},
	{"GET", "/queue/q/jobs?status=queued", "", 200},
	{"GET", "/queue/q/jobs?key=k1", "", 200},
	{"GET", "/queue/q/jobs?tag=t&tracked=false&worker=w1&limit=1", "", 200},
	{"GET", "/queue/q/jobs?limit=1", "", 200},
	{"GET", "/queue/q/jobs?limit=1&cursor={cursor}", "", 200},
	{"GET", "/queue/q/jobs?status=scheduled&limit=1", "", 200},
	{"GET", "/queue/q/jobs?status=nope", "", 400},
	{"GET", "/queue/nope/jobs", "", 404},

	{"PATCH", "/queue/q", `{"paused":true,"concurrency":5,"retry_backoff":{"min":"1s","max":"1h"}}`, 204},
	{"GET", "/queue/q", "", 200},
	{"GET", "/queue/q/stats", "", 200},
	{"GET", "/queue/q/stats?date=2024-03-01", "", 200},
	{"GET", "/queue/q/stats?date=x", "", 400},
	{"GET", "/queue/q/stats?by=minute", "", 200},
	{"GET", "/queue/q/stats?by=day", "", 400},
	{"GET", "/queue/nope/stats", "", 404},

	{"PUT", "/queue/q/schedules/s1", `{"every":"1h","job":{"input":{"z":1,"a":2},"tags":["sched"]}}`, 201},
	{"PUT", "/queue/q/schedules/s1", `{"cron":"*/5 * * * *","job":{}}`, 204},
	{"PUT", "/queue/q/schedules/s2", `{"every":"90s","job":{"priority":1}}`, 201},
	{"PUT", "/queue/nope/schedules/s1", `{"every":"1h","job":{}}`, 404},
	{"PUT", "/queue/q/schedules/s1", `{"job":{}}`, 400},
	{"GET", "/queue/q/schedules", "", 200},
	{"GET", "/queue/nope/schedules", "", 404},
	{"GET", "/queue/q/schedules/s1", "", 200},
	{"GET", "/queue/q/schedules/s2", "", 200},
	{"GET", "/queue/q/schedules/zz", "", 404},
	{"GET", "/queue/q/schedules/bad%20id", "", 400},
	{"DELETE", "/queue/q/schedules/s1", "", 204},
	{"DELETE", "/queue/q/schedules/s1", "", 404},
	{"DELETE", "/queue/q/schedules/bad%20id", "", 400},

	{"PUT", "/queue/f", `{}`, 201},
	{"POST", "/queue/f/jobs", `[{},{}]`, 201}, // 9, 10
	{"GET", "/queue/f/job?count=2", "", 200},
	{"PATCH", "/job/9", `{"status":"failed"}`, 204},
	{"PATCH", "/job/10", `{"status":"timed_out","error":{"message":"no group"}}`, 204},
	{"PATCH", "/job/10", `{"status":"queued"}`, 204},
	{"GET", "/queue/f/job", "", 200},
	{"PATCH", "/job/10", `{"status":"failed"}`, 204},
	{"GET", "/failures", "", 200},
	{"GET", "/failures/failed?limit=1", "", 200},
	{"GET", "/failures/failed?limit=1&cursor={cursor}", "", 200},
	{"GET", "/job/10?fields=history,error,attempt,worker", "", 200},
	{"GET", "/job/10?wait=1s&fields=status,ended", "", 200},       // ended: at once
	{"GET", "/job/99?wait=1s", "", 404},                           // missing: at once
	{"POST", "/queue/f/job?wait=0s", `{}`, 202},                   // 11, queued
	{"POST", "/queue/f/job?wait=1ms&fields=id,status", `{}`, 202}, // 12, queued
	{"POST", "/queue/f/job?wait=1s", `{"depends_on":[10]}`, 200},  // 13, cancelled at once
	{"POST", "/queue/f/job?wait=21s", `{}`, 400},

	{"DELETE", "/job/1", "", 204},
	{"DELETE", "/job/1", "", 404},
	{"DELETE", "/job/x", "", 404},
	{"DELETE", "/queue/dlq", "", 204},
	{"DELETE", "/queue/dlq", "", 404},
	{"GET", "/info", "", 200},
	{"GET", "/workers", "", 200},
}

// TestOpenAPIConformance drives every route through the real handlers and
// checks every exchange against openapi.json (conformance.serve): the
// walk above, Ocypod's replayed request set, the bad inputs, each route
// with a bad queue name, an oversized body, Redis down (503), Redis
// failing (500) and storage full (507). Every response the document lists
// must have been produced.
func TestOpenAPIConformance(t *testing.T) {
	t.Parallel()
	c := newConformance(t)
	// run sends steps; "{cursor}" in a path stands for the previous
	// answer's next_cursor.
	run := func(t *testing.T, h http.Handler, steps []step) {
		t.Helper()
		var prev []byte
		for _, s := range steps {
			path := s.path
			if strings.Contains(path, "{cursor}") {
				var page struct {
					NextCursor *string `json:"next_cursor"`
				}
				if err := json.Unmarshal(prev, &page); err != nil || page.NextCursor == nil {
					t.Fatalf("%s: the previous answer %.200q has no next_cursor", path, prev)
				}
				path = strings.ReplaceAll(path, "{cursor}", url.QueryEscape(*page.NextCursor))
			}
			w := c.serve(t, h, newRequest(s.method, path, s.body))
			if w.Code != s.want {
				t.Errorf("%s %s %s = %d %.200q, want %d", s.method, path, s.body, w.Code, w.Body, s.want)
			}
			prev = w.Body.Bytes()
		}
	}

	t.Run("walk", func(t *testing.T) { run(t, newEnv(t, Options{}).h, walkSteps) })

	t.Run("replay", func(t *testing.T) {
		var env *testEnv
		for _, s := range readReplay(t) {
			if s.env {
				env = newEnv(t, Options{MaxBodySize: s.limit})
				if s.limit == badInputLimit {
					seedBadInputs(t, env)
				}
			}
			env.clock.Advance(s.advance)
			c.serve(t, env.h, s.r)
		}
	})

	t.Run("extension bad inputs", func(t *testing.T) {
		env := newEnv(t, Options{})
		seedBadInputs(t, env)
		for _, tt := range extBadInputs() {
			if w := c.serve(t, env.h, tt.request("1")); w.Code != tt.status {
				t.Errorf("%s = %d, want %d", tt.name, w.Code, tt.status)
			}
		}
	})

	t.Run("each route", func(t *testing.T) {
		const limit = 16
		env, small := newEnv(t, Options{}), newEnv(t, Options{MaxBodySize: limit})
		for _, rt := range Routes() {
			path, body := sample(rt)
			if strings.HasPrefix(rt.Pattern, "/queue/{name}") {
				bad := strings.Replace(path, "/queue/q", "/queue/bad%20name", 1)
				run(t, env.h, []step{{rt.Method, bad, body, http.StatusBadRequest}})
			}
			if rb, _ := c.doc.object(t, c.ops[rt.Method+" "+rt.Pattern].ptr+"/requestBody"); rb != nil {
				run(t, small.h, []step{{rt.Method, path, `{"input":"` + strings.Repeat("x", limit) + `"}`, http.StatusRequestEntityTooLarge}})
			}
		}
	})

	// Redis down, then Redis answering every command with an error: each
	// route that needs Redis fails, /health in JSON.
	for _, failing := range []struct {
		name   string
		url    string
		status int
	}{
		{"redis down", "redis://127.0.0.1:" + strconv.Itoa(closedPort(t)), http.StatusServiceUnavailable},
		{"redis failing", "redis://" + errorRedis(t), http.StatusInternalServerError},
	} {
		t.Run(failing.name, func(t *testing.T) {
			rdb, err := redisstore.NewClient(redisstore.ClientOptions{URL: failing.url, DialTimeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer rdb.Close()
			store, err := redisstore.New(rdb, redisstore.Options{Namespace: "openapi"})
			if err != nil {
				t.Fatal(err)
			}
			h := New(store, Options{}).Handler()
			for _, rt := range Routes() {
				path, body := sample(rt)
				want := failing.status
				switch {
				case !NeedsStore(rt.Name):
					want = http.StatusOK
				case rt.Name == "health":
					want = http.StatusServiceUnavailable
				}
				run(t, h, []step{{rt.Method, path, body, want}})
			}
		})
	}

	t.Run("storage full", func(t *testing.T) {
		env := newEnvWith(t, Options{}, redisstore.Options{Admit: func(context.Context) error {
			return ocypod.StorageFull("Storage full: no room in this test")
		}})
		run(t, env.h, []step{
			{"POST", "/queue/q/job", `{}`, 507},
			{"POST", "/queue/q/jobs", `[{}]`, 507},
			{"PUT", "/job/1/output", `1`, 507},
			{"PATCH", "/job/1", `{"output":1}`, 507},
		})
	})

	if t.Failed() {
		return
	}
	if missing := c.uncovered(t); len(missing) > 0 {
		t.Errorf("openapi.json lists responses no request produced or parameters no successful request gave "+
			"(drop them, or make the tests produce them):\n%s",
			strings.Join(missing, "\n"))
	}
}

// seedBadInputs seeds what the bad inputs expect: queue q, jobs 1 and 2,
// job 1 running.
func seedBadInputs(tb testing.TB, env *testEnv) {
	tb.Helper()
	env.seedQueue(tb, "q", `{"retries":1}`)
	env.seedJob(tb, "q", `{"input":{"k":"v"},"tags":["t"]}`)
	env.seedJob(tb, "q", `{}`)
	env.take(tb, "q")
}

// errorRedis starts a RESP server that answers every command with an
// error Redis could give (as a pre-6 server, it refuses HELLO, so clients
// speak RESP2) and returns its address.
func errorRedis(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var wg sync.WaitGroup
	tb.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				for {
					name, err := readRESPCommand(r)
					if err != nil {
						return
					}
					reply := "-ERR injected failure\r\n"
					if strings.EqualFold(name, "HELLO") {
						reply = "-ERR unknown command 'HELLO'\r\n"
					}
					if _, err := io.WriteString(conn, reply); err != nil {
						return
					}
				}
			})
		}
	})
	return ln.Addr().String()
}

// readRESPCommand reads one command (an array of bulk strings) and
// returns its name.
func readRESPCommand(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "*")))
	if err != nil || n < 1 {
		return "", io.ErrUnexpectedEOF
	}
	var name string
	for i := range n {
		line, err := r.ReadString('\n')
		if err != nil {
			return "", err
		}
		size, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "$")))
		if err != nil || size < 0 {
			return "", io.ErrUnexpectedEOF
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return "", err
		}
		if i == 0 {
			name = string(b[:size])
		}
	}
	return name, nil
}
