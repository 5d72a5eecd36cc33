package push

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Errors of Engine.Start: nothing was started.
var (
	ErrBusy     = errors.New("push: the queue has its push concurrency of deliveries in flight")
	ErrInFlight = errors.New("push: a job of the delivery is already in a delivery")
)

// ReportTimeout bounds a Reporter call, which runs even when the
// delivery's context was cancelled (its outcome must not be lost).
const ReportTimeout = 30 * time.Second

// Engine runs deliveries concurrently: at most Target.Concurrency per
// queue, never one job in two deliveries at once, each delivery's outcomes
// handed to the Reporter once.
type Engine struct {
	d   *Deliverer
	r   Reporter
	log *slog.Logger

	mu       sync.Mutex
	inFlight map[uint64]bool
	perQueue map[string]int
	wg       sync.WaitGroup
}

// NewEngine makes an Engine that delivers with d and reports to r.
func NewEngine(d *Deliverer, r Reporter) *Engine {
	return &Engine{d: d, r: r, log: d.log, inFlight: map[uint64]bool{}, perQueue: map[string]int{}}
}

// Free is how many more deliveries queue may start now with the given
// concurrency: what the store should take for.
func (e *Engine) Free(queue string, concurrency int) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return max(concurrency-e.perQueue[queue], 0)
}

// Start begins dl in its own goroutine and returns at once. It starts
// nothing and returns ErrBusy when the queue (the jobs' queue) already has
// Target.Concurrency deliveries in flight, or ErrInFlight when one of its
// jobs is in a delivery. The outcomes go to the Reporter with a context
// that outlives ctx's cancellation (bounded by ReportTimeout); a Report
// error is logged, and the store's own running-job timeout then recovers
// the jobs.
func (e *Engine) Start(ctx context.Context, dl Delivery) error {
	if dl.Target == nil || len(dl.Jobs) == 0 {
		return errors.New("push: empty delivery")
	}
	queue := dl.Jobs[0].Queue
	e.mu.Lock()
	if e.perQueue[queue] >= dl.Target.Concurrency {
		e.mu.Unlock()
		return ErrBusy
	}
	for _, j := range dl.Jobs {
		if e.inFlight[j.ID] {
			e.mu.Unlock()
			return ErrInFlight
		}
	}
	for _, j := range dl.Jobs {
		e.inFlight[j.ID] = true
	}
	e.perQueue[queue]++
	e.wg.Add(1)
	e.mu.Unlock()

	go func() {
		defer e.wg.Done()
		outs := e.d.Deliver(ctx, dl)
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ReportTimeout)
		err := e.r.Report(rctx, outs)
		cancel()
		if err != nil {
			ids := make([]uint64, len(dl.Jobs))
			for i, j := range dl.Jobs {
				ids[i] = j.ID
			}
			e.log.Error("push: outcomes not recorded", slog.String("queue", queue), slog.Any("jobs", ids), slog.String("error", err.Error()))
		}
		// The jobs leave the in-flight set only once their outcome is
		// recorded: a new take cannot see them before.
		e.mu.Lock()
		for _, j := range dl.Jobs {
			delete(e.inFlight, j.ID)
		}
		if e.perQueue[queue]--; e.perQueue[queue] <= 0 {
			delete(e.perQueue, queue)
		}
		e.mu.Unlock()
	}()
	return nil
}

// Wait blocks until every started delivery has been reported.
func (e *Engine) Wait() { e.wg.Wait() }
