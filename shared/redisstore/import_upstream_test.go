package redisstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// upstreamDB writes a database in upstream Ocypod 0.8's own key layout
// (reference/ocypod-behaviour.md §5.1), as its server leaves it: keys
// under "<ns>:" (none for an empty namespace), timestamps as chrono's
// RFC 3339 with nanoseconds and "+00:00", durations as whole seconds in
// hashes and as humantime strings in retry_delays.
type upstreamDB struct {
	t   testing.TB
	ctx context.Context
	rdb redis.UniversalClient
	pre string
	now time.Time
}

func newUpstreamDB(t testing.TB, rdb redis.UniversalClient, ns string, now time.Time) *upstreamDB {
	u := &upstreamDB{t: t, ctx: context.WithoutCancel(t.Context()), rdb: rdb, now: now}
	if ns != "" {
		u.pre = ns + ":"
	}
	return u
}

func (u *upstreamDB) do(args ...any) {
	u.t.Helper()
	if err := u.rdb.Do(u.ctx, args...).Err(); err != nil {
		u.t.Fatalf("%v: %v", args, err)
	}
}

// rfc is chrono's to_rfc3339 of now+d.
func (u *upstreamDB) rfc(d time.Duration) string {
	return u.now.Add(d).UTC().Format("2006-01-02T15:04:05.000000000") + "+00:00"
}

func (u *upstreamDB) queue(name string, timeout, hb, expires, retries int, delays ...string) {
	u.t.Helper()
	u.do("SADD", u.pre+"queues", name)
	args := []any{"HSET", u.pre + "queue:" + name, "timeout", timeout, "heartbeat_timeout", hb,
		"expires_after", expires, "retries", retries}
	if len(delays) > 0 {
		b, _ := json.Marshal(delays)
		args = append(args, "retry_delays", string(b))
	}
	u.do(args...)
}

// job writes job id's hash: the mandatory fields, then extra ones.
func (u *upstreamDB) job(id uint64, queue, status string, timeout, hb, expires, retries, attempted int, created time.Duration, extra ...string) {
	u.t.Helper()
	args := []any{"HSET", u.pre + "job:" + strconv.FormatUint(id, 10), "id", id, "queue", queue, "status", status,
		"created_at", u.rfc(created), "timeout", timeout, "heartbeat_timeout", hb, "expires_after", expires,
		"retries", retries, "retries_attempted", attempted}
	for _, e := range extra {
		args = append(args, e)
	}
	u.do(args...)
}

func (u *upstreamDB) push(list, side string, ids ...uint64) {
	u.t.Helper()
	for _, id := range ids {
		u.do(side, u.pre+list, id)
	}
}

func (u *upstreamDB) tag(t string, ids ...uint64) {
	for _, id := range ids {
		u.do("SADD", u.pre+"tag:"+t, id)
	}
}

// bigInput is an input above the size kept with a job's metadata.
var bigInput = `{"blob":"` + strings.Repeat("x", 300) + `"}`

// Roles of the standard fixture's jobs.
const (
	upCompleted  = 1  // mail: tags, input, output, in ended
	upRunning    = 2  // mail: big input, a heartbeat, times out at t0+6s
	upRetrying   = 3  // mail: failed, retry 2 of 2 due at t0+30s (its 1m delay)
	upExhausted  = 4  // mail: timed out with no retry left, still in failed
	upCancelled  = 5  // mail: cancelled while queued, in ended
	upFailedBulk = 6  // bulk: failed with retries 0, in ended
	upGoneRun    = 7  // gone (deleted queue): running, no timeout
	upStub       = 8  // a stub hash of Ocypod's take race: skipped
	upDelayBug   = 9  // mail: failed, retries left, but moved to ended by Ocypod's delay bug
	upBulkFirst  = 10 // bulk queued 10..69; 11 was requeued (at the back)
	upBulkLast   = 69
	upLimbo      = 70 // bulk: taken into limbo, never marked running: first in line
	upStray      = 71 // bulk: queued in no list: last in line
	upGoneQueued = 72 // gone: queued in the deleted queue's leftover list
	upLastID     = 75 // job_id (73..75 expired)
)

// upstreamFixture writes the standard upstream database: every status,
// tags, inputs and outputs, retries with delays, a queue of 62 queued jobs
// whose order is not id order, jobs of a deleted queue, a stub, and the
// statistics.
func upstreamFixture(u *upstreamDB) {
	u.queue("mail", 30, 10, 300, 2, "10s", "1m")
	u.queue("bulk", 300, 0, 60, 0)
	u.queue("jobs", 300, 0, 300, 0)
	u.do("SET", u.pre+"job_id", upLastID)
	u.job(upCompleted, "mail", "completed", 30, 10, 300, 2, 0, -100*time.Second,
		"started_at", u.rfc(-90*time.Second), "ended_at", u.rfc(-80*time.Second),
		"tags", `["a","ü x"]`, "input", `{"n":1}`, "output", `{"ok":true}`)
	u.job(upRunning, "mail", "running", 30, 10, 300, 2, 0, -30*time.Second,
		"started_at", u.rfc(-20*time.Second), "last_heartbeat", u.rfc(-5*time.Second), "input", bigInput,
		"retry_delays", `["10s","1m"]`)
	u.job(upRetrying, "mail", "failed", 30, 10, 300, 2, 1, -60*time.Second,
		"started_at", u.rfc(-40*time.Second), "ended_at", u.rfc(-30*time.Second),
		"retry_delays", `["10s","1m"]`, "output", `{"err":"x"}`, "tags", `["a"]`)
	u.job(upExhausted, "mail", "timed_out", 30, 10, 300, 2, 2, -70*time.Second,
		"started_at", u.rfc(-65*time.Second), "ended_at", u.rfc(-20*time.Second))
	u.job(upCancelled, "mail", "cancelled", 30, 10, 300, 2, 0, -50*time.Second, "ended_at", u.rfc(-10*time.Second))
	u.job(upFailedBulk, "bulk", "failed", 300, 0, 60, 0, 0, -50*time.Second,
		"started_at", u.rfc(-45*time.Second), "ended_at", u.rfc(-44*time.Second), "tags", `[]`)
	u.job(upGoneRun, "gone", "running", 0, 0, 300, 0, 0, -5*time.Second, "started_at", u.rfc(-time.Second))
	u.do("HSET", u.pre+"job:8", "status", "running", "started_at", u.rfc(-time.Second))
	u.job(upDelayBug, "mail", "failed", 30, 10, 300, 2, 0, -300*time.Second,
		"started_at", u.rfc(-290*time.Second), "ended_at", u.rfc(-280*time.Second), "retry_delays", `["10m"]`)
	for id := uint64(upBulkFirst); id <= upBulkLast; id++ {
		u.job(id, "bulk", "queued", 300, 0, 60, 0, 0, time.Duration(id)*time.Second-time.Hour,
			"input", fmt.Sprintf(`{"i":%d}`, id))
	}
	u.push("queue:bulk:jobs", "LPUSH", slices.Collect(upRange(upBulkFirst, upBulkLast))...)
	u.do("LREM", u.pre+"queue:bulk:jobs", 1, 11)
	u.push("queue:bulk:jobs", "LPUSH", 11)
	u.job(upLimbo, "bulk", "queued", 300, 0, 60, 0, 0, -time.Hour)
	u.push("limbo", "LPUSH", upLimbo)
	u.job(upStray, "bulk", "queued", 300, 0, 60, 0, 0, -time.Minute)
	u.job(upGoneQueued, "gone", "queued", 0, 0, 300, 0, 0, -time.Minute)
	u.push("queue:gone:jobs", "LPUSH", upGoneQueued)
	u.push("running", "RPUSH", upRunning, upGoneRun)
	u.push("failed", "RPUSH", upRetrying, upExhausted)
	u.push("ended", "LPUSH", upCompleted)
	u.push("ended", "RPUSH", upCancelled, upFailedBulk, upDelayBug)
	u.tag("a", upCompleted, upRetrying)
	u.tag("ü x", upCompleted)
	for name, n := range map[string]int{"created": 80, "completed": 20, "retried": 7, "failed": 9, "timed_out": 3, "cancelled": 2} {
		u.do("SET", u.pre+"stats:jobs:num_"+name, n)
	}
}

func upRange(from, to uint64) func(func(uint64) bool) {
	return func(yield func(uint64) bool) {
		for id := from; id <= to; id++ {
			if !yield(id) {
				return
			}
		}
	}
}

// upBulkOrder is the fixture's bulk queue in Ocypod's take order.
func upBulkOrder() []uint64 {
	order := []uint64{upLimbo, upBulkFirst}
	order = append(order, slices.Collect(upRange(12, upBulkLast))...)
	return append(order, 11, upStray)
}

// sourceClient is a client of its own to srv, as the import command makes
// one (Import puts its read-only hook on it).
func sourceClient(t testing.TB, srv *redistest.Server) redis.UniversalClient {
	t.Helper()
	c, err := redisstore.NewClient(redisstore.ClientOptions{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// dumpKeys is the DUMP of every key of rdb under prefix pre.
func dumpKeys(t testing.TB, rdb redis.UniversalClient, pre string) map[string]string {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	keys, err := rdb.Keys(ctx, pre+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range keys {
		v, err := rdb.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	return out
}
