package redisstore

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestArgv: a call's one argument is a JSON object of the common fields
// (written by hand) and the call's own, whatever the queue name holds.
func TestArgv(t *testing.T) {
	t.Parallel()
	s, err := New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), Options{Namespace: "ns", Partitions: 4,
		Rand: func() float64 { return 1e-7 }, StatsDays: 2})
	if err != nil {
		t.Fatal(err)
	}
	now := time.UnixMicro(1767323045678901)
	for _, c := range []struct {
		call *call
		want map[string]any
	}{
		{&call{p: 3, now: now}, map[string]any{}},
		{&call{p: 1, queue: "q", now: now, args: map[string]any{"id": "7", "specs": []any{map[string]any{"input": `{"a":"<b>"}`}}}},
			map[string]any{"queue": "q", "id": "7", "specs": []any{map[string]any{"input": `{"a":"<b>"}`}}}},
		{&call{queue: "q", now: now, args: map[string]any{"queue": "other"}}, map[string]any{"queue": "other"}},
		{&call{queue: "a\"b\\c\n<é>", now: now}, map[string]any{"queue": "a\"b\\c\n<é>"}},
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
