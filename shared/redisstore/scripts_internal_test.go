package redisstore

import (
	"fmt"
	"io/fs"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
	seen := map[string]bool{}
	for _, f := range files {
		name := f[len("scripts/"):]
		seen[name] = true
		sc, ok := loaded[name]
		if !ok {
			t.Errorf("%s is embedded but no script uses it", name)
			continue
		}
		b := sc.get()
		sha, err := srv.Client().ScriptLoad(t.Context(), b.src).Result()
		if err != nil {
			t.Errorf("SCRIPT LOAD %s: %v", name, err)
		} else if sha != b.rs.Hash() {
			t.Errorf("SCRIPT LOAD %s = %s, want %s", name, sha, b.rs.Hash())
		}
	}
	for name := range loaded {
		if !seen[name] {
			t.Errorf("script %s is not embedded", name)
		}
	}
}

// keyBuilt finds a declared key concatenated into another name, which on
// a cluster would be a key the script did not declare.
var keyBuilt = regexp.MustCompile(`\b(K\.\w+|KEYS\[\d+\])\s*\.\.`)

func TestScriptsDeclareKnownKeys(t *testing.T) {
	t.Parallel()
	for name, sc := range loaded {
		b := sc.get()
		if len(b.keys) == 0 {
			t.Errorf("%s takes no key: ElastiCache refuses scripts without keys", name)
		}
		for _, k := range b.keys {
			if !slices.Contains(partitionKeys, k) { // a key no other script or Go code uses
				t.Errorf("%s uses key K.%s, which the store does not know", name, k)
			}
		}
		if keyBuilt.MatchString(b.src) {
			t.Errorf("%s builds a key name from another in Lua: %q", name, keyBuilt.FindString(b.src))
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

// evalLib runs the helper files followed by body, with K holding one scratch key and
// A the common arguments.
func evalLib(t *testing.T, rdb redis.UniversalClient, body string) any {
	t.Helper()
	now := time.Date(2024, 3, 1, 10, 0, 0, 123456000, time.UTC)
	src := fmt.Sprintf("local K = {z = KEYS[1]}\nlocal A = {now = '%d', ms = %d, p = 0, P = 1}\n%s\n%s",
		now.UnixMicro(), now.UnixMilli(), libSource(), body)
	res, err := rdb.Eval(t.Context(), src, []string{"{" + t.Name() + "}:z"}).Result()
	if err != nil {
		t.Fatalf("eval %q: %v", body, err)
	}
	return res
}

// TestLuaMatchesGo checks that the Lua and Go sides of the layout agree:
// lex encodings, escaping, and the metadata field names.
func TestLuaMatchesGo(t *testing.T) {
	t.Parallel()
	for name, rdb := range luaBackends(t) {
		for _, n := range []uint64{0, 9, 10, 123456789, 9007199254740991} {
			if got := evalLib(t, rdb, fmt.Sprintf("return lp('%d')", n)); got != lp(n) {
				t.Errorf("%s: lp(%d) = %q, want %q", name, n, got, lp(n))
			}
		}
		for _, s := range []string{"plain", "a b", "a!b", "! !", "ü {x}:y*", ""} {
			if got := evalLib(t, rdb, fmt.Sprintf("return esc(%q)", s)); got != escLex(s) {
				t.Errorf("%s: esc(%q) = %q, want %q", name, s, got, escLex(s))
			}
		}
		// META and LONG invert each other, entry for entry.
		got := evalLib(t, rdb, `local n, m = 0, 0
for long, short in pairs(META) do
  if LONG[short] ~= long then return 'LONG[' .. short .. '] = ' .. tostring(LONG[short]) end
  n = n + 1
end
for _ in pairs(LONG) do m = m + 1 end
if m ~= n then return 'LONG has ' .. m .. ' entries, META ' .. n end
return n`)
		if n, ok := got.(int64); !ok || n < 30 {
			t.Errorf("%s: META/LONG check = %v", name, got)
		}
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
		{`tostring(delay_of({retry_delays = '[10,60]', retries_attempted = '0'}))`, "10"},
		{`tostring(delay_of({retry_delays = '[10,60]', retries_attempted = 1}))`, "60"},
		{`tostring(delay_of({retry_delays = '[10,60]', retries_attempted = '5'}))`, "60"},
		{`tostring(delay_of({retry_delays = '[1', retries_attempted = '0'}))`, "0"},
		{`tostring(delay_of({retry_delays = '[31557600000]', retries_attempted = '0'}))`, "31557600000"},
		{`tostring(delay_of({}))`, "0"},
		{`tostring(delay_of({retry_backoff = '{"min":2,"max":100,"factor":3,"jitter":false}', retries_attempted = 2}))`, "18"},
		{`tostring(delay_of({retry_backoff = '{"min":2,"max":10,"factor":3,"jitter":false}', retries_attempted = 5}))`, "10"},
		{`tostring(bucket(0))`, "0"},
		{`tostring(bucket(59.9))`, "59"},
		{`tostring(bucket(60))`, "60"},
		{`tostring(bucket(3599))`, "118"},
		{`tostring(bucket(3600))`, "119"},
		{`tostring(bucket(86399))`, "141"},
		{`tostring(bucket(86400))`, "142"},
		{`tostring(bucket(1e9))`, "171"},
		{`id_of_member('q q g1000000b12a0c123')`, "123"},
		// A stored score round-trips exactly.
		{`redis.call('ZADD', K.z, int_str(ms('1709287200123456')), 'a'); return redis.call('ZSCORE', K.z, 'a')`, "1709287200123"},
	}
	for name, rdb := range luaBackends(t) {
		for _, c := range cases {
			body := "return " + c.expr
			if strings.HasPrefix(c.expr, "redis.") {
				body = c.expr
			}
			got := evalLib(t, rdb, body)
			if fmt.Sprint(got) != c.want {
				t.Errorf("%s: %s = %v, want %s", name, c.expr, got, c.want)
			}
		}
	}
}

// TestStoredJobNamesEveryField checks that storedJob has a field for every
// short name records.lua stores: encoding/json matches names case-insensitively
// when no field has the exact name, so "K" (blocked) would land in "k"
// (key).
func TestStoredJobNamesEveryField(t *testing.T) {
	t.Parallel()
	lib := readScript("lib/records.lua")
	start := strings.Index(lib, "local META = {")
	end := strings.Index(lib[start:], "}") + start
	tags := map[string]bool{}
	typ := reflect.TypeOf(storedJob{})
	for i := range typ.NumField() {
		tags[strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]] = true
	}
	for _, m := range regexp.MustCompile(`(\w+) = '(\w+)'`).FindAllStringSubmatch(lib[start:end], -1) {
		if !tags[m[2]] {
			t.Errorf("storedJob has no field for %s (%q)", m[1], m[2])
		}
	}
}
