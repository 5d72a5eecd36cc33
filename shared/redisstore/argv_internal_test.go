package redisstore

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func argvStore(t testing.TB) *Store {
	s, err := New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), Options{Namespace: "ns", Partitions: 4,
		Rand: func() float64 { return 1e-7 }, StatsDays: 2})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestArgv: a call's one argument is a JSON object of the common fields
// (written by hand) and the call's own, whatever the queue name holds.
func TestArgv(t *testing.T) {
	t.Parallel()
	s := argvStore(t)
	now := time.UnixMicro(1767323045678901)
	input := `{"a":"<b>"}`
	for _, c := range []struct {
		call *call
		want map[string]any
	}{
		{&call{sc: scriptInfo, p: 3, now: now}, map[string]any{}},
		{&call{sc: scriptCreateJob, p: 1, queue: "q", now: now, args: &createJobArgs{Specs: []*jobSpecArg{{Input: input}}}},
			map[string]any{"queue": "q", "specs": []any{map[string]any{"input": input}}}},
		{&call{sc: scriptRetryGroup, now: now, args: &retryGroupArgs{Group: "g", Limit: 5}}, map[string]any{"group": "g", "limit": 5.0}},
		{&call{sc: scriptDeleteQueue, queue: "a\"b\\c\n<é>", now: now}, map[string]any{"queue": "a\"b\\c\n<é>"}},
		// Through encoding/json: none of the fields, some.
		{&call{sc: scriptShares, queue: "q", now: now, args: &sharesArgs{}}, map[string]any{"queue": "q"}},
		{&call{sc: scriptShares, queue: "q", now: now, args: &sharesArgs{Raise: true, V: new(int64)}},
			map[string]any{"queue": "q", "raise": true, "v": 0.0}},
	} {
		text, err := s.argv(c.call)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(text), &got); err != nil {
			t.Fatalf("argv = %s: %v", text, err)
		}
		want := map[string]any{"now": "1767323045678901", "ms": 1767323045678.0, "p": float64(c.call.p), "P": 4.0,
			"rand": 1e-7, "stats_ttl": 3 * 86400.0}
		for k, v := range c.want {
			want[k] = v
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("argv = %s\n got %v\nwant %v", text, got, want)
		}
	}
}

// TestArgvRefusesOtherTypes: a call whose argument is not one its script
// declares is refused before anything is sent.
func TestArgvRefusesOtherTypes(t *testing.T) {
	t.Parallel()
	s := argvStore(t)
	for _, c := range []*call{
		{sc: scriptTake, args: &heartbeatArgs{}},
		{sc: scriptTake}, // none, where one is needed
		{sc: scriptTake, args: (*takeArgs)(nil)},
		{sc: scriptInfo, args: &takeArgs{}}, // one, where none is taken
		{sc: scriptCreateJob, args: map[string]any{"specs": []any{}}},
	} {
		if text, err := s.argv(c); err == nil {
			t.Errorf("argv of %s with %T = %s, want an error", c.sc.name, c.args, text)
		}
	}
	// Values and pointers of a declared type are both taken.
	for _, c := range []*call{{sc: scriptTake, args: &takeArgs{}}, {sc: scriptSweep, args: sweepArgs{Kind: "exp"}}} {
		if _, err := s.argv(c); err != nil {
			t.Errorf("argv of %s with %T: %v", c.sc.name, c.args, err)
		}
	}
}

// TestArgAppendersMatchJSON checks that every argument type that writes its
// own JSON (argAppender) writes what encoding/json writes from its json
// tags, byte for byte, for random values: the tags are what
// TestScriptArgsMatchLua compares with the Lua.
func TestArgAppendersMatchJSON(t *testing.T) {
	t.Parallel()
	appender := reflect.TypeFor[argAppender]()
	r := rand.New(rand.NewPCG(1, 2))
	seen := 0
	for _, name := range sortedLoaded() {
		for _, typ := range loaded[name].args {
			if !reflect.PointerTo(typ).Implements(appender) {
				continue
			}
			seen++
			for i := range 500 {
				v := reflect.New(typ)
				if i > 0 { // the first: the zero value
					fillRandom(r, v.Elem())
				}
				want, err := json.Marshal(v.Interface())
				if err != nil {
					t.Fatal(err)
				}
				got := closeObject(v.Interface().(argAppender).appendArgs(nil), 0)
				if !bytes.Equal(got, want) {
					t.Fatalf("%s: appendArgs writes\n%s\nencoding/json\n%s", typ, got, want)
				}
			}
		}
	}
	if seen < 5 {
		t.Errorf("%d argument types write their own JSON, want the hot calls' (create, take, update, heartbeat...)", seen)
	}
}

// TestJobSpecArgKeepsStoredJSON: a spec's JSON (stored in a schedule) is
// the one the map of its fields had before it was a struct: keys sorted.
func TestJobSpecArgKeepsStoredJSON(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		var a jobSpecArg
		fillRandom(r, reflect.ValueOf(&a).Elem())
		got, err := json.Marshal(&a)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(got, &m); err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(m)
		if !bytes.Equal(got, want) {
			t.Fatalf("spec JSON\n%s\nwith its keys sorted\n%s", got, want)
		}
	}
}

// argStrings are strings that JSON escapes in every way.
var argStrings = []string{"", "q", "emails-1", `{"a":[1,"x"]}`, "<b>&amp;</b>", "a\"b\\c", "\x00\x01\x1f\x7f",
	"\b\f\n\r\t", "é ü 日本", "\u2028\u2029", "\xff\xfe bad utf-8 \xe2\x82", "a b!c"}

// fillRandom sets v's exported fields to random values: nil or set
// pointers, slices and maps nil, empty or not, numbers around 0 and 2^46.
func fillRandom(r *rand.Rand, v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				fillRandom(r, v.Field(i))
			}
		}
	case reflect.Pointer:
		if r.IntN(3) > 0 {
			v.Set(reflect.New(v.Type().Elem()))
			fillRandom(r, v.Elem())
		}
	case reflect.Slice:
		switch n := r.IntN(4); n {
		case 0: // nil
		default:
			v.Set(reflect.MakeSlice(v.Type(), n-1, n-1))
			for i := range n - 1 {
				fillRandom(r, v.Index(i))
			}
		}
	case reflect.Map:
		if n := r.IntN(3); n > 0 {
			v.Set(reflect.MakeMap(v.Type()))
			for range n - 1 {
				k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				fillRandom(r, k)
				fillRandom(r, e)
				v.SetMapIndex(k, e)
			}
		}
	case reflect.String:
		v.SetString(argStrings[r.IntN(len(argStrings))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int64:
		v.SetInt([]int64{0, 1, -1, 1<<46 + 1, -1 << 62, r.Int64()}[r.IntN(6)])
	case reflect.Uint64:
		v.SetUint([]uint64{0, 1, 1<<46 - 1, 1 << 46, 1<<64 - 1, r.Uint64()}[r.IntN(6)])
	case reflect.Float64:
		v.SetFloat([]float64{0, 0.5, 1e-7, 1e21, r.Float64()}[r.IntN(5)])
	case reflect.Interface:
		// Raw JSON values are not written by hand.
	default:
		panic("fillRandom: " + v.Type().String())
	}
}

// TestAppendJSONString: strings are written byte for byte as
// encoding/json writes them.
func TestAppendJSONString(t *testing.T) {
	t.Parallel()
	all := append([]string{strings.Repeat("x", 300), string(rune(0x10ffff)), "\xed\xa0\x80"}, argStrings...)
	for c := range 256 {
		all = append(all, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"b")
	}
	for _, s := range all {
		checkAppendJSONString(t, s)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range argStrings {
		f.Add(s)
	}
	f.Fuzz(checkAppendJSONString)
}

func checkAppendJSONString(t *testing.T, s string) {
	want, _ := json.Marshal(s)
	if got := appendJSONString([]byte("x"), s); !bytes.Equal(got[1:], want) || got[0] != 'x' {
		t.Errorf("appendJSONString(%q) = %s, want %s", s, got[1:], want)
	}
}

// TestLuaUint: numbers cjson keeps exact are numbers, others decimal
// strings.
func TestLuaUint(t *testing.T) {
	t.Parallel()
	for n, want := range map[uint64]string{0: "0", 1<<46 - 1: "70368744177663", 1 << 46: `"70368744177664"`,
		1<<64 - 1: `"18446744073709551615"`} {
		if got, _ := json.Marshal(luaUint(n)); string(got) != want {
			t.Errorf("luaUint(%d) = %s, want %s", n, got, want)
		}
	}
}
