package redisstore_test

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// v1Entry is one key of testdata/v1.json: a namespace written by version 1
// of the store (its own create, take, heartbeat, output, update, delete,
// queue delete and retry sweep calls, at the last version-1 commit), dumped
// key by key.
type v1Entry struct {
	Key   string          `json:"key"`
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// loadV1 writes testdata/v1.json into h's namespace and returns it.
func (h *harness) loadV1() []v1Entry {
	h.t.Helper()
	b, err := os.ReadFile("testdata/v1.json")
	if err != nil {
		h.t.Fatal(err)
	}
	var entries []v1Entry
	if err := json.Unmarshal(b, &entries); err != nil {
		h.t.Fatal(err)
	}
	for _, e := range entries {
		key := "{" + h.ns + "}:" + strings.TrimPrefix(e.Key, "{v1}:")
		switch e.Type {
		case "string":
			var v string
			_ = json.Unmarshal(e.Value, &v)
			h.do("SET", key, v)
		case "hash":
			var v map[string]string
			_ = json.Unmarshal(e.Value, &v)
			for f, x := range v {
				h.do("HSET", key, f, x)
			}
		case "set":
			var v []string
			_ = json.Unmarshal(e.Value, &v)
			for _, x := range v {
				h.do("SADD", key, x)
			}
		case "zset":
			var v [][2]string
			_ = json.Unmarshal(e.Value, &v)
			for _, z := range v {
				h.do("ZADD", key, z[1], z[0])
			}
		}
	}
	return entries
}

var upgradeCases = []conformanceCase{
	{name: "upgrade from version 1", run: func(t *testing.T, h *harness) {
		if h.P != 1 {
			_, err := h.s.Open(h.ctx)
			if err != nil {
				t.Fatalf("Open on an empty namespace = %v", err)
			}
			return // version-1 data upgrades with one partition only
		}
		entries := h.loadV1()
		info, err := h.s.Open(h.ctx)
		if err != nil || !info.Upgrade {
			t.Fatalf("Open = %+v, %v, want an upgrade", info, err)
		}
		want := map[uint64]map[string]string{}
		var stats map[string]string
		var mailOrder []uint64
		var registered []string                      // version 1's queues
		settingsOf := map[string]map[string]string{} // their hashes
		for _, e := range entries {
			switch {
			case e.Key == "{v1}:queues":
				_ = json.Unmarshal(e.Value, &registered)
			case strings.HasPrefix(e.Key, "{v1}:queue:") && strings.Count(e.Key, ":") == 2:
				var v map[string]string
				_ = json.Unmarshal(e.Value, &v)
				settingsOf[strings.TrimPrefix(e.Key, "{v1}:queue:")] = v
			case strings.HasPrefix(e.Key, "{v1}:job:"):
				var v map[string]string
				_ = json.Unmarshal(e.Value, &v)
				id, _ := strconv.ParseUint(v["id"], 10, 64)
				want[id] = v
			case e.Key == "{v1}:stats":
				_ = json.Unmarshal(e.Value, &stats)
			case e.Key == "{v1}:queue:mail:jobs":
				var v [][2]string
				_ = json.Unmarshal(e.Value, &v)
				for _, z := range v {
					id, _ := strconv.ParseUint(z[0], 10, 64)
					mailOrder = append(mailOrder, id)
				}
			}
		}
		// In batches of 4, one per call, as a sweeper with a small budget
		// does; the first batch twice over, as after a crash before its
		// progress was recorded.
		redisstore.SetUpgradeBatch(h.s, 4)
		batches := 0
		for i := 0; ; i++ {
			if i > 50 {
				t.Fatal("the upgrade never finished")
			}
			done, err := h.s.Upgrade(h.ctx, time.Nanosecond)
			if err != nil {
				t.Fatal(err)
			}
			if done {
				break
			}
			batches++
			if i == 0 {
				h.do("DEL", "{"+h.ns+"}:v1up")
			}
		}
		if batches < 3 {
			t.Fatalf("the upgrade took %d batches, want several", batches)
		}
		// Version 1's queues, and only they, with their settings; a deleted
		// queue's jobs came along without bringing it back.
		slices.Sort(registered)
		if got, err := h.s.ListQueues(h.ctx); err != nil || !slices.Equal(got, registered) {
			t.Errorf("queues after the upgrade = %v, %v, want version 1's %v", got, err, registered)
		}
		for _, q := range registered {
			qs, err := h.s.GetQueue(h.ctx, q)
			if err != nil || strconv.FormatUint(qs.Timeout.Secs, 10) != settingsOf[q]["timeout"] ||
				strconv.FormatUint(qs.Retries, 10) != settingsOf[q]["retries"] {
				t.Errorf("queue %s = %+v, %v, version 1 had %v", q, qs, err, settingsOf[q])
			}
		}
		if info, err := h.s.Open(h.ctx); err != nil || info.Upgrade {
			t.Fatalf("Open after the upgrade = %+v, %v", info, err)
		}
		for id, v := range want {
			j, err := h.s.GetJob(h.ctx, id)
			if err != nil {
				t.Fatalf("job %d: %v", id, err)
			}
			created, _ := strconv.ParseInt(v["created_at"], 10, 64)
			if string(j.Status) != v["status"] || j.Queue != v["queue"] || !j.CreatedAt.Equal(time.UnixMicro(created)) ||
				strconv.FormatUint(j.Retries, 10) != v["retries"] || strconv.FormatUint(j.Timeout.Secs, 10) != v["timeout"] {
				t.Errorf("job %d = %+v, version 1 had %v", id, j, v)
			}
			if in := v["input"]; in != "" && string(j.Input) != in {
				t.Errorf("job %d input = %s, want %s", id, j.Input, in)
			}
			if out := v["output"]; out != "" && string(j.Output) != out {
				t.Errorf("job %d output = %s, want %s", id, j.Output, out)
			}
			if tags := v["tags"]; tags != "" {
				b, _ := json.Marshal(j.Tags)
				if string(b) != tags {
					t.Errorf("job %d tags = %s, want %s", id, b, tags)
				}
			}
			if v["abandoned"] == "1" && !j.Ended() {
				t.Errorf("job %d had its retry abandoned but is not ended", id)
			}
			if v["status"] == "failed" && v["retries"] != "0" && v["retries_attempted"] < v["retries"] && v["abandoned"] != "1" {
				if j.RetryDue == nil || j.Ended() {
					t.Errorf("job %d lost its pending retry: %+v", id, j)
				}
			}
		}
		if got := h.queueIDs("mail").Queued; !slices.Equal(got, mailOrder) {
			t.Errorf("mail's queued jobs = %v, want version 1's order %v", got, mailOrder)
		}
		got := h.info().Statistics
		n := func(k string) uint64 { x, _ := strconv.ParseUint(stats[k], 10, 64); return x }
		if got != (ocypod.Statistics{Created: n("created"), Completed: n("completed"), Retried: n("retried"),
			Failed: n("failed"), TimedOut: n("timed_out"), Cancelled: n("cancelled")}) {
			t.Errorf("statistics = %+v, version 1 had %v", got, stats)
		}
		if ids, _ := h.s.TagJobIDs(h.ctx, "ü x"); len(ids) != 1 {
			t.Errorf("tag ids = %v", ids)
		}
		// The id counter carried over; the queues work.
		maxID := slices.Max(slices.Collect(func(yield func(uint64) bool) {
			for id := range want {
				if !yield(id) {
					return
				}
			}
		}))
		if id := h.create("mail", ocypod.JobSpec{}); id <= maxID {
			t.Errorf("new id %d, want above %d", id, maxID)
		}
		if got := h.takeIDs("mail", 1); len(got) != 1 || got[0] != mailOrder[0] {
			t.Errorf("first take = %v, want %d", got, mailOrder[0])
		}
		// Nothing of version 1 is left.
		if keys := h.rdb.Keys(h.ctx, "{"+h.ns+"}:*").Val(); slices.ContainsFunc(keys, func(k string) bool {
			rest := strings.TrimPrefix(k, "{"+h.ns+"}:")
			return strings.HasPrefix(rest, "job:") || strings.HasPrefix(rest, "queue:") || strings.HasPrefix(rest, "tag:") || rest == "v1up"
		}) {
			t.Errorf("version-1 keys left: %v", keys)
		}
	}},
	{name: "open checks the layout", run: func(t *testing.T, h *harness) {
		info, err := h.s.Open(h.ctx)
		if err != nil || !info.Fresh {
			t.Fatalf("Open(empty) = %+v, %v", info, err)
		}
		if info, err := h.s.Open(h.ctx); err != nil || info.Fresh {
			t.Fatalf("Open again = %+v, %v", info, err)
		}
		other, err := redisstore.New(h.rdb, redisstore.Options{Namespace: h.ns, Partitions: h.P + 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.Open(h.ctx); err == nil || !strings.Contains(err.Error(), "partitions") {
			t.Fatalf("Open with other partitions = %v", err)
		}
	}},
}
