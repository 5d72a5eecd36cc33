//go:build legacyfixture || layoutfixture

package redisstore_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// dumpPartitions is every key of h's namespace by partition and name.
func (h *harness) dumpPartitions() []legacyEntry {
	var out []legacyEntry
	for p := range h.P {
		keys, err := h.rdb.Keys(h.ctx, h.lay.Prefix(p)+"*").Result()
		if err != nil {
			h.t.Fatal(err)
		}
		slices.Sort(keys)
		for _, k := range keys {
			e := legacyEntry{P: p, Name: strings.TrimPrefix(k, h.lay.Prefix(p)), Type: h.rdb.Type(h.ctx, k).Val()}
			var v any
			switch e.Type {
			case "string":
				v = h.rdb.Get(h.ctx, k).Val()
			case "hash":
				v = h.rdb.HGetAll(h.ctx, k).Val()
			case "zset":
				var zs [][2]string
				for _, z := range h.rdb.ZRangeWithScores(h.ctx, k, 0, -1).Val() {
					zs = append(zs, [2]string{z.Member.(string), formatScore(z.Score)})
				}
				v = zs
			case "list":
				v = h.rdb.LRange(h.ctx, k, 0, -1).Val()
			default:
				h.t.Fatalf("key %s: type %s not in the fixture format", k, e.Type)
			}
			e.Value, _ = json.Marshal(v)
			out = append(out, e)
		}
	}
	meta := h.rdb.HGetAll(h.ctx, "{"+h.ns+"}:meta").Val()
	if len(meta) > 0 {
		v, _ := json.Marshal(meta)
		out = append(out, legacyEntry{P: -1, Name: "meta", Type: "hash", Value: v})
	}
	return out
}

func formatScore(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
