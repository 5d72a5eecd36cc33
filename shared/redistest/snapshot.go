package redistest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Snapshot renders every key matching one of the KEYS patterns with its
// type, contents and whether it expires, so that two snapshots are equal
// exactly when those keys hold the same data: a test takes one before and
// one after a request that must change nothing. It reads values with plain
// commands rather than DUMP, so it works on miniredis too.
func Snapshot(tb testing.TB, rdb redis.UniversalClient, patterns ...string) map[string]string {
	tb.Helper()
	ctx := tb.Context()
	var keys []string
	for _, p := range patterns {
		ks, err := rdb.Keys(ctx, p).Result()
		if err != nil {
			tb.Fatalf("redistest: KEYS %s: %v", p, err)
		}
		keys = append(keys, ks...)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	snap := make(map[string]string, len(keys))
	for _, k := range keys {
		v, err := render(tb, rdb, k)
		if err != nil {
			tb.Fatalf("redistest: reading %s: %v", k, err)
		}
		snap[k] = v
	}
	return snap
}

// render is one key's type and contents, members and fields sorted.
func render(tb testing.TB, rdb redis.UniversalClient, key string) (string, error) {
	ctx := tb.Context()
	typ, err := rdb.Type(ctx, key).Result()
	if err != nil {
		return "", err
	}
	var parts []string
	switch typ {
	case "string":
		v, err := rdb.Get(ctx, key).Result()
		if err != nil {
			return "", err
		}
		parts = []string{strconv.Quote(v)}
	case "hash":
		m, err := rdb.HGetAll(ctx, key).Result()
		if err != nil {
			return "", err
		}
		for f, v := range m {
			parts = append(parts, strconv.Quote(f)+"="+strconv.Quote(v))
		}
		slices.Sort(parts)
	case "set":
		if parts, err = rdb.SMembers(ctx, key).Result(); err != nil {
			return "", err
		}
		for i, m := range parts {
			parts[i] = strconv.Quote(m)
		}
		slices.Sort(parts)
	case "zset":
		zs, err := rdb.ZRangeWithScores(ctx, key, 0, -1).Result()
		if err != nil {
			return "", err
		}
		for _, z := range zs {
			parts = append(parts, fmt.Sprintf("%q@%v", z.Member, z.Score))
		}
	case "list":
		if parts, err = rdb.LRange(ctx, key, 0, -1).Result(); err != nil {
			return "", err
		}
		for i, m := range parts {
			parts[i] = strconv.Quote(m)
		}
	case "none": // deleted between KEYS and TYPE
	default:
		return "", fmt.Errorf("type %s is not rendered", typ)
	}
	ttl, err := rdb.PTTL(ctx, key).Result()
	if err != nil {
		return "", err
	}
	expires := ""
	if ttl > 0 {
		expires = " expires"
	}
	return typ + expires + " [" + strings.Join(parts, " ") + "]", nil
}
