package redistest

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// LoadDump writes the keys of a JSON dump file (a list of {key, type,
// value}: string, hash, set, and zset as [member, score] pairs, as the
// store's testdata/v1.json) into rdb, each key's prefix from replaced by
// to.
func LoadDump(tb testing.TB, rdb redis.UniversalClient, path, from, to string) {
	tb.Helper()
	ctx := tb.Context()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	var entries []struct {
		Key   string          `json:"key"`
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(b, &entries); err != nil {
		tb.Fatalf("redistest: %s: %v", path, err)
	}
	for _, e := range entries {
		key := to + strings.TrimPrefix(e.Key, from)
		var err error
		switch e.Type {
		case "string":
			var v string
			if err = json.Unmarshal(e.Value, &v); err == nil {
				err = rdb.Set(ctx, key, v, 0).Err()
			}
		case "hash":
			var v map[string]string
			if err = json.Unmarshal(e.Value, &v); err == nil {
				err = rdb.HSet(ctx, key, v).Err()
			}
		case "set":
			var v []string
			if err = json.Unmarshal(e.Value, &v); err == nil {
				for _, x := range v {
					if err = rdb.SAdd(ctx, key, x).Err(); err != nil {
						break
					}
				}
			}
		case "zset":
			var v [][2]string
			if err = json.Unmarshal(e.Value, &v); err == nil {
				for _, z := range v {
					if err = rdb.Do(ctx, "ZADD", key, z[1], z[0]).Err(); err != nil {
						break
					}
				}
			}
		default:
			tb.Fatalf("redistest: %s: key %s of unknown type %q", path, e.Key, e.Type)
		}
		if err != nil {
			tb.Fatalf("redistest: %s: key %s: %v", path, e.Key, err)
		}
	}
}
