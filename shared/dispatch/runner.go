package dispatch

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/push"
)

// runner serves one push queue: takes as many jobs as its free delivery
// slots can send, waiting in the store's long-poll for them, and starts
// their deliveries.
type runner struct {
	d     *Dispatcher
	queue string
	cfg   atomic.Pointer[queueConfig]
	eng   *push.Engine

	mu       sync.Mutex
	inFlight int
	freed    chan struct{} // buffered 1: a delivery was recorded
	quit     chan struct{} // closed by halt
	once     sync.Once
}

func (d *Dispatcher) newRunner(queue string, cfg *queueConfig) *runner {
	r := &runner{d: d, queue: queue, freed: make(chan struct{}, 1), quit: make(chan struct{})}
	r.cfg.Store(cfg)
	r.eng = push.NewEngine(d.o.Deliverer, r)
	d.all = append(d.all, r)
	return r
}

func (r *runner) halt() { r.once.Do(func() { close(r.quit) }) }

// stopped reports whether the runner or its dispatcher is stopping.
func (r *runner) stopped() bool {
	select {
	case <-r.quit:
		return true
	case <-r.d.stop:
		return true
	default:
		return false
	}
}

// stopSignal is closed when either the runner or its dispatcher stops.
func (r *runner) stopSignal() <-chan struct{} {
	c := make(chan struct{})
	go func() {
		select {
		case <-r.quit:
		case <-r.d.stop:
		}
		close(c)
	}()
	return c
}

func (r *runner) free(concurrency int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return concurrency - r.inFlight
}

func (r *runner) run() {
	defer r.d.loops.Done()
	stop := r.stopSignal()
	for !r.stopped() {
		cfg := r.cfg.Load()
		free := r.free(cfg.target.Concurrency)
		if free <= 0 {
			select {
			case <-r.freed:
			case <-stop:
			}
			continue
		}
		n := min(free*cfg.target.Batch, ocypod.MaxTakeCount)
		if r.d.beforeTake != nil {
			r.d.beforeTake(r.queue)
		}
		ctx, cancel := context.WithTimeout(r.d.deliver, r.d.o.Wait+push.ReportTimeout)
		began := time.Now()
		jobs, err := r.d.store.Take(ctx, ocypod.TakeRequest{Queues: []string{r.queue}, Count: n, Worker: Worker,
			Wait: r.d.o.Wait, Stop: stop, Push: true, PushTimeout: cfg.timeout + Margin})
		cancel()
		switch {
		case err != nil && (r.d.o.NotPush(err) || ocypod.ErrorKind(err) == ocypod.KindNotFound):
			r.d.log.Info("push: queue no longer delivers by push", slog.String("queue", r.queue))
			r.d.forget(r)
			return
		case err != nil:
			r.d.log.Warn("push: take failed", slog.String("queue", r.queue), slog.String("error", err.Error()))
			select {
			case <-time.After(retryPause):
			case <-stop:
			}
			continue
		}
		if len(jobs) == 0 && time.Since(began) < r.d.o.Wait/2 {
			// Nothing, and early: the process has its most long-polls
			// waiting (max_long_polls), so the take could not wait. Pause
			// rather than ask Redis again at once.
			select {
			case <-time.After(retryPause):
			case <-stop:
			}
			continue
		}
		// The settings may have changed while the take waited: the jobs
		// go to the queue's target as it is now.
		r.start(r.d.deliver, r.cfg.Load(), jobs)
	}
}

// start splits jobs into deliveries of the target's batch and starts them.
func (r *runner) start(ctx context.Context, cfg *queueConfig, jobs []ocypod.NextJob) {
	t := cfg.target
	for len(jobs) > 0 {
		k := min(len(jobs), t.Batch)
		dl := push.Delivery{Target: t, Timeout: cfg.timeout, Jobs: make([]push.Job, k)}
		for i, j := range jobs[:k] {
			dl.Jobs[i] = push.Job{ID: j.ID, Attempt: int(j.Attempt), Queue: j.Queue, Input: j.Input}
		}
		jobs = jobs[k:]
		r.mu.Lock()
		r.inFlight++
		r.mu.Unlock()
		if err := r.startOne(ctx, dl); err != nil {
			// Not delivered: the jobs stay running until their timeout,
			// then are retried by the queue's policy.
			r.release()
			r.d.log.Error("push: delivery not started", slog.String("queue", r.queue), slog.String("error", err.Error()))
		}
	}
}

// startOne starts dl. The runner counts its own slots, freed as each
// delivery is recorded; the engine's count of the same deliveries drops a
// moment later, once its Report returned. A slot the runner freed is
// therefore waited for in the engine, briefly.
func (r *runner) startOne(ctx context.Context, dl push.Delivery) error {
	deadline := time.Now().Add(push.ReportTimeout)
	for {
		err := r.eng.Start(ctx, dl)
		if !errors.Is(err, push.ErrBusy) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(time.Millisecond) // the engine's own bookkeeping, microseconds away
	}
}

// release frees a delivery slot and wakes the runner.
func (r *runner) release() {
	r.mu.Lock()
	r.inFlight--
	r.mu.Unlock()
	select {
	case r.freed <- struct{}{}:
	default:
	}
}

// Report records a delivery's outcomes (push.Reporter), then frees its
// slot.
func (r *runner) Report(ctx context.Context, outs []push.Outcome) error {
	defer r.release()
	return record(ctx, r.d.store, r.d.log, outs)
}
