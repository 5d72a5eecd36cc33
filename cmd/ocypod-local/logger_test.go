package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/config"
)

// TestLoggerLines checks that the logger writes, at every configured level,
// the lines of a handler that always renames the trace level: the renaming
// is left out only where it cannot change a line.
func TestLoggerLines(t *testing.T) {
	at := time.Date(2026, 11, 25, 4, 50, 1, 123456789, time.UTC)
	levels := []slog.Level{config.LevelTrace - 1, config.LevelTrace, slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}
	for _, level := range levels {
		var got, want strings.Builder
		h := newLogger(&got, level).Handler()
		ref := slog.NewTextHandler(&want, &slog.HandlerOptions{Level: level, ReplaceAttr: traceName})
		for _, l := range levels {
			for _, h := range []slog.Handler{h, ref} {
				if !h.Enabled(context.Background(), l) {
					continue
				}
				r := slog.NewRecord(at, l, "Job created", 0)
				r.AddAttrs(slog.Uint64("job_id", 7), slog.String("queue", "a b"), slog.Any("level", l))
				if err := h.WithAttrs([]slog.Attr{slog.Bool("x", true)}).WithGroup("g").Handle(context.Background(), r); err != nil {
					t.Fatal(err)
				}
				if err := h.Handle(context.Background(), r); err != nil {
					t.Fatal(err)
				}
			}
		}
		if got.String() != want.String() {
			t.Errorf("level %v: got\n%s\nwant\n%s", level, got.String(), want.String())
		}
		if level <= config.LevelTrace && !strings.Contains(got.String(), "level=TRACE") {
			t.Errorf("level %v: no TRACE line in\n%s", level, got.String())
		}
	}
}

// TestLoggerInfoLineAllocates checks that a job event's line at the
// default level costs no allocation: no ReplaceAttr call per attribute.
func TestLoggerInfoLineAllocates(t *testing.T) {
	h := newLogger(io.Discard, slog.LevelInfo).Handler()
	ctx := context.Background()
	allocs := fewestAllocs(func() {
		r := slog.NewRecord(time.Now(), slog.LevelInfo, "Job created", 0)
		r.AddAttrs(slog.Uint64("job_id", 7), slog.String("queue", "tp"))
		_ = h.Handle(ctx, r)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per info line, want 0", allocs)
	}
}

// fewestAllocs is the fewest allocations per call of f in up to ten
// rounds of testing.AllocsPerRun (stopping at a round without any): the
// count is the whole process's, and goroutines that earlier tests left
// behind (a pool redialling a stopped Redis) allocate now and then, more
// often on a loaded machine; one quiet round shows f's own.
func fewestAllocs(f func()) float64 {
	n := testing.AllocsPerRun(1000, f)
	for i := 0; i < 9 && n > 0; i++ {
		n = min(n, testing.AllocsPerRun(1000, f))
	}
	return n
}
