package redisstore

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// BenchmarkArgv measures a hot call's argument: built as the store builds
// it for one request, then encoded (Store.argv). No Redis is contacted.
func BenchmarkArgv(b *testing.B) {
	s, err := New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), Options{Namespace: "ns"})
	if err != nil {
		b.Fatal(err)
	}
	now := time.UnixMicro(1767323045678901)
	attempt := uint64(3)
	done := ocypod.StatusCompleted
	spec := ocypod.JobSpec{Input: json.RawMessage(`{"n":1,"text":"hello"}`), Tags: []string{"a", "b"}}
	calls := map[string]func() *call{
		"create": func() *call {
			a, err := specArgs(&spec, now)
			if err != nil {
				b.Fatal(err)
			}
			return &call{sc: scriptCreateJob, p: 0, queue: "emails", now: now, args: &createJobArgs{Specs: []*jobSpecArg{&a}}}
		},
		"take": func() *call {
			args := &takeArgs{Queues: []string{"emails"}, Count: 1, Worker: "w-1",
				Inline: s.o.InlineSweep, MaxBytes: s.o.MaxAnswerBytes, WorkerTTL: s.o.WorkerExpiry.Milliseconds()}
			return &call{sc: scriptTake, p: 0, now: now, args: args}
		},
		"complete": func() *call {
			args, err := s.updateArgs(b.Context(), 12345, &ocypod.JobUpdate{Status: &done, Output: json.RawMessage(`{"ok":true}`), Attempt: &attempt}, now)
			if err != nil {
				b.Fatal(err)
			}
			c := s.jobCall(scriptUpdateJob, 12345, args)
			c.now = now
			return c
		},
		"heartbeat": func() *call {
			c := s.jobCall(scriptHeartbeat, 12345, &heartbeatArgs{Attempt: &attempt})
			c.now = now
			return c
		},
	}
	for _, name := range []string{"create", "take", "complete", "heartbeat"} {
		mk := calls[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.argv(mk()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/encode", func(b *testing.B) {
			c := mk()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.argv(c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
