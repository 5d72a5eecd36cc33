package dispatch

import (
	"context"
	"log/slog"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/push"
)

// DispatchOnce is one bounded pass of the dispatcher, for a function
// invoked now and then (after creates, and on a schedule) rather than a
// process that stays: it takes from each push queue, without waiting, as
// many due jobs as its push concurrency and batch allow, delivers them
// with timeouts cut to what is left of budget, and returns once their
// outcomes are recorded, or when budget is over (deliveries still under way
// are then cancelled and recorded as failed attempts). It returns how many
// jobs it took. A Dispatcher used this way is not Started.
func (d *Dispatcher) DispatchOnce(ctx context.Context, budget time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	deadline, _ := ctx.Deadline()
	qs, err := d.store.PushQueues(ctx)
	if err != nil {
		return 0, err
	}
	var runners []*runner
	taken := 0
	for name, s := range qs {
		cfg, err := configOf(s)
		if err != nil {
			d.log.Error("push: unreadable push setting", slog.String("queue", name), slog.String("error", err.Error()))
			continue
		}
		// What is left of the budget, less the time to record outcomes.
		left := time.Until(deadline) - Margin
		if left < push.MinTimeout {
			break
		}
		cfg.timeout = min(cfg.timeout, left)
		d.mu.Lock()
		r := d.newRunner(name, cfg)
		d.mu.Unlock()
		n := min(cfg.target.Concurrency*cfg.target.Batch, ocypod.MaxTakeCount)
		jobs, err := d.store.Take(ctx, ocypod.TakeRequest{Queues: []string{name}, Count: n, Worker: Worker,
			Push: true, PushTimeout: cfg.timeout + Margin})
		if err != nil {
			d.log.Warn("push: take failed", slog.String("queue", name), slog.String("error", err.Error()))
			continue
		}
		taken += len(jobs)
		r.start(ctx, cfg, jobs)
		runners = append(runners, r)
	}
	for _, r := range runners {
		r.eng.Wait()
	}
	return taken, nil
}
