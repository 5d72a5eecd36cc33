// Package upgradetest holds what tests of the store's callers (the local
// server, the Lambda functions) need to put a namespace in the state a
// killed upgrade leaves.
package upgradetest

import (
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// HalfUpgraded writes the store's version-1 test namespace
// (shared/redisstore/testdata/v1.json, 14 jobs, ids up to 15) into ns and
// leaves it as an upgrade killed half-way leaves it: every job converted
// but the upgrade unfinished (the id counter not moved, the layout not
// recorded) and, if lease is not zero, the dead process's lock held for
// lease (and the one a killed 0.3.0 upgrader left, for two minutes).
func HalfUpgraded(t testing.TB, rdb redis.UniversalClient, ns string, lease time.Duration) {
	t.Helper()
	ctx := t.Context()
	_, here, _, _ := runtime.Caller(0)
	redistest.LoadDump(t, rdb, filepath.Join(filepath.Dir(here), "..", "testdata", "v1.json"), "{v1}:", "{"+ns+"}:")
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	// A budget spent after the first batch (all 14 jobs): the upgrade
	// stops before its last step.
	if done, err := s.Upgrade(ctx, time.Nanosecond); done || err != nil {
		t.Fatalf("first upgrade call = %v, %v, want unfinished", done, err)
	}
	if lease == 0 {
		return
	}
	if err := rdb.Set(ctx, "{"+ns+"}:upgrade", "dead", lease).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, "{"+ns+"}:v1up:lock", "1", 2*time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
}
