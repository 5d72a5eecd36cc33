package sweep_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
	"github.com/ocyless/ocyless/shared/sweep"
)

// Once is one sweep of a kind until nothing more is due: here the timeout
// sweep finds a job whose worker went quiet. The store's clock is injected,
// so time passes without waiting.
func ExampleOnce() {
	rdb, closeRedis := redistest.MiniredisClient()
	defer closeRedis()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	store, err := redisstore.New(rdb, redisstore.Options{Now: func() time.Time { return now }, InlineSweep: -1})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	settings := ocypod.DefaultQueueSettings()
	settings.Timeout = ocypod.Seconds(60)
	if _, err := store.PutQueue(ctx, "work", settings); err != nil {
		fmt.Println(err)
		return
	}
	created, _ := store.CreateJob(ctx, "work", ocypod.JobSpec{})
	_, _ = store.NextJob(ctx, "work") // a worker takes it, then never answers

	now = now.Add(2 * time.Minute)
	tot, err := sweep.Once(ctx, store, sweep.Timeouts, nil)
	fmt.Println("timed out:", tot.TimedOut, err)
	status, _ := store.JobStatus(ctx, created.ID)
	fmt.Println("status:", status)
	// Output:
	// timed out: 1 <nil>
	// status: timed_out
}
