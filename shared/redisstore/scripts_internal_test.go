package redisstore

import (
	"context"
	"fmt"
	"io/fs"
	"reflect"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redistest"
)

// Internal tests cannot use TestMain's shared server (the external test
// package owns TestMain), so each starts what it needs.

func TestEveryScriptIsUsedAndLoads(t *testing.T) {
	t.Parallel()
	files, err := fs.Glob(scriptFiles, "scripts/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("embedded scripts: %v, %v", files, err)
	}
	srv, err := redistest.StartServer(redistest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ctx := context.Background()
	seen := map[string]bool{}
	for _, f := range files {
		name := f[len("scripts/"):]
		seen[name] = true
		if name == libName {
			continue
		}
		sc, ok := loaded[name]
		if !ok {
			t.Errorf("%s is embedded but no script uses it", name)
			continue
		}
		sha, err := srv.Client().ScriptLoad(ctx, scriptSource(name)).Result()
		if err != nil {
			t.Errorf("SCRIPT LOAD %s: %v", name, err)
		} else if sha != sc.get().Hash() {
			t.Errorf("SCRIPT LOAD %s = %s, want %s", name, sha, sc.get().Hash())
		}
	}
	for name := range loaded {
		if !seen[name] {
			t.Errorf("script %s is not embedded", name)
		}
	}
}

// luaBackends are the Redis implementations the Lua library is checked on.
func luaBackends(t *testing.T) map[string]redis.UniversalClient {
	srv, err := redistest.StartServer(redistest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	_, mini := redistest.Miniredis(t)
	return map[string]redis.UniversalClient{"redis": srv.Client(), "miniredis": mini}
}

// evalLib runs lib.lua followed by body with the key prefix as ARGV[1].
func evalLib(t *testing.T, rdb redis.UniversalClient, k keys, body string, args ...any) any {
	t.Helper()
	src := readScript(libName) + "\n" + body
	res, err := rdb.Eval(context.Background(), src, []string{k.Queues()}, append([]any{k.Prefix()}, args...)...).Result()
	if err != nil {
		t.Fatalf("eval %q: %v", body, err)
	}
	return res
}

func TestLuaKeysMatchGo(t *testing.T) {
	t.Parallel()
	k := newKeys("ns.1-x_Y")
	const body = `
local q, id, tag = ARGV[2], ARGV[3], ARGV[4]
local r = {k_queues(), k_queue(q), k_pending(q), k_jobqueues(), k_seq(), k_job_id(),
  k_job(id), k_running(), k_failed(), k_ended(), k_tag(tag), k_stats()}
for _, st in ipairs(INDEXED) do r[#r + 1] = k_index(q, st) end
return r`
	for name, rdb := range luaBackends(t) {
		for _, in := range []struct {
			queue string
			id    uint64
			tag   string
		}{
			{"q", 1, "t"},
			{"a.b-c_D9", 18446744073709551615, "ü {x}:y*"},
		} {
			want := []any{k.Queues(), k.Queue(in.queue), k.QueueJobs(in.queue), k.JobQueues(), k.Seq(), k.JobID(),
				k.Job(in.id), k.Running(), k.Failed(), k.Ended(), k.Tag(in.tag), k.Stats()}
			for _, st := range ocypod.Statuses[1:] {
				want = append(want, k.QueueStatus(in.queue, st))
			}
			got := evalLib(t, rdb, k, body, in.queue, strconv.FormatUint(in.id, 10), in.tag)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: Lua keys = %q, want %q", name, got, want)
			}
		}
	}
}

func TestLuaCodesMatchGo(t *testing.T) {
	t.Parallel()
	_, rdb := redistest.Miniredis(t)
	got := evalLib(t, rdb, newKeys(""), `return {OK, JOB_NOT_FOUND, QUEUE_NOT_FOUND, CONFLICT, NOT_RUNNING, CORRUPT}`)
	want := []any{int64(codeOK), int64(codeJobNotFound), int64(codeQueueNotFound), int64(codeConflict), int64(codeNotRunning), int64(codeCorrupt)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Lua codes = %v, want %v", got, want)
	}
	var statuses []any
	for _, st := range ocypod.Statuses[1:] {
		statuses = append(statuses, string(st))
	}
	if got := evalLib(t, rdb, newKeys(""), `return INDEXED`); !reflect.DeepEqual(got, statuses) {
		t.Fatalf("Lua INDEXED = %v, want %v", got, statuses)
	}
}

// TestLuaNumbers checks the number handling the scripts rely on, where real
// Redis (Lua 5.1, %.14g) and miniredis (gopher-lua) could differ.
func TestLuaNumbers(t *testing.T) {
	t.Parallel()
	cases := []struct{ expr, want string }{
		{`int_str(1709287200123)`, "1709287200123"},
		{`int_str(ms('1709287200123456'))`, "1709287200123"},
		{`int_str(ms('1709287200123456') + (300 + 1) * 1000)`, "1709287501123"},
		{`int_str(9007199254740991)`, "9007199254740991"},
		{`int_str(9007199254740992)`, "+inf"},
		{`int_str(math.huge)`, "+inf"},
		{`int_str(ms('18446744073709551615') + 18446744073709551615 * 1000)`, "+inf"},
		{`int_str(redis.call('INCR', KEYS[1] .. ':n'))`, "1"},
		{`tostring(retry_delay({retry_delays = '[10,60]', retries_attempted = '0'}))`, "10"},
		{`tostring(retry_delay({retry_delays = '[10,60]', retries_attempted = '1'}))`, "60"},
		{`tostring(retry_delay({retry_delays = '[10,60]', retries_attempted = '5'}))`, "60"},
		{`tostring(retry_delay({retry_delays = '[1', retries_attempted = '0'}))`, "0"},
		{`tostring(retry_delay({retry_delays = '["10s"]', retries_attempted = '0'}))`, "0"},
		{`tostring(retry_delay({retry_delays = '[31557600000]', retries_attempted = '0'}))`, "31557600000"},
		{`tostring(retry_delay({}))`, "0"},
		// A stored score round-trips exactly.
		{`redis.call('ZADD', KEYS[1] .. ':z', int_str(ms('1709287200123456')), 'a'); return redis.call('ZSCORE', KEYS[1] .. ':z', 'a')`, "1709287200123"},
	}
	for name, rdb := range luaBackends(t) {
		for _, c := range cases {
			body := "return " + c.expr
			if len(c.expr) > 6 && c.expr[:6] == "redis." {
				body = c.expr
			}
			got := evalLib(t, rdb, newKeys(redistest.Namespace(t)), body)
			if fmt.Sprint(got) != c.want {
				t.Errorf("%s: %s = %v, want %s", name, c.expr, got, c.want)
			}
		}
	}
}
