// Package dispatch runs push delivery (api-v3 §10) over the store: it
// takes the due jobs of every queue with a push setting, in take order and
// with worker "push", hands them to package push's Engine, and records each
// outcome with the attempt fencing of a PATCH /job/{id}?attempt=.
//
// The local server runs a Dispatcher inside its process (Start, Close): one
// runner per push queue, each a long-polling take on that queue alone, so
// a create into the queue wakes it through the store's wake channel (no
// periodic scan finds jobs), scheduled jobs and retries are taken when due
// (the take's own timer on the next due time), and a dead or slow target
// only ever holds its own queue's delivery slots. DispatchOnce is one
// bounded pass of the same work, for a function that runs for a budget.
//
// A job is never in two deliveries at once: the store's take makes it
// running for this attempt only, its timeout (and heartbeat timeout) is
// raised to the delivery's plus a margin so no sweep times it out while it
// is delivered, and the outcome is recorded for that attempt alone. A
// process that dies mid-delivery leaves the job running until that timeout;
// it is then timed out and retried by the queue's policy.
package dispatch

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/push"
)

// Store is what the dispatcher needs of the store (*redisstore.Store).
type Store interface {
	// PushQueues returns the settings of every queue with a push setting.
	PushQueues(ctx context.Context) (map[string]ocypod.QueueSettings, error)
	// Take with TakeRequest.Push: the dispatcher's take. It answers
	// NotPush (see Options) for a queue without push.
	Take(ctx context.Context, req ocypod.TakeRequest) ([]ocypod.NextJob, error)
	UpdateJobs(ctx context.Context, items []ocypod.BatchUpdate, take *ocypod.TakeRequest) ([]ocypod.BatchOutcome, []ocypod.NextJob, error)
}

// Worker is the worker name of the jobs the dispatcher takes.
const Worker = "push"

// Margin is added to a delivery's timeout for the job's running timeout:
// the time to record the outcome.
const Margin = 5 * time.Second

// Defaults of Options.
const (
	DefaultRefresh = 5 * time.Second
	DefaultWait    = ocypod.MaxWait
	// retryPause is the pause of a runner after a store error.
	retryPause = time.Second
)

// Options configure a Dispatcher.
type Options struct {
	// Deliverer sends the deliveries. Required.
	Deliverer *push.Deliverer
	// NotPush reports whether a take's error says the queue has no push
	// setting any more (redisstore.ErrNotPush): its runner stops.
	NotPush func(error) bool
	Logger  *slog.Logger
	// Refresh is how often the push queues are listed again (default
	// DefaultRefresh); Changed makes it happen at once.
	Refresh time.Duration
	// Wait is how long one take waits for a job (default DefaultWait).
	Wait time.Duration
}

// Dispatcher delivers the jobs of every push queue.
type Dispatcher struct {
	store Store
	o     Options
	log   *slog.Logger

	mu      sync.Mutex
	runners map[string]*runner
	all     []*runner // every runner made, for Close to wait on
	started bool

	stop    chan struct{} // closed by Close: no new take
	kick    chan struct{} // buffered 1: list the queues again now
	loops   sync.WaitGroup
	deliver context.Context // deliveries' context, cancelled past Close's deadline
	cancel  context.CancelFunc
	// beforeTake, when set, is called as a runner starts a take (tests).
	beforeTake func(queue string)
}

// New makes a Dispatcher; Start runs it.
func New(store Store, o Options) *Dispatcher {
	if o.Deliverer == nil {
		panic("dispatch.New: Options.Deliverer is required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Refresh <= 0 {
		o.Refresh = DefaultRefresh
	}
	if o.Wait <= 0 {
		o.Wait = DefaultWait
	}
	if o.NotPush == nil {
		o.NotPush = func(error) bool { return false }
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Dispatcher{store: store, o: o, log: o.Logger, runners: map[string]*runner{},
		stop: make(chan struct{}), kick: make(chan struct{}, 1), deliver: ctx, cancel: cancel}
}

// Changed tells the dispatcher a queue's settings changed in this process
// (redisstore.Store.OnQueueChange): the push queues are listed again at
// once, so a new push queue is served without waiting for Refresh.
func (d *Dispatcher) Changed(string) {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// Start lists the push queues and serves them until Close.
func (d *Dispatcher) Start() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.started {
		return
	}
	d.started = true
	d.loops.Add(1)
	go d.loop()
	if cs, ok := d.store.(CallbackStore); ok {
		d.loops.Add(1)
		go d.callbackLoop(cs)
	}
}

func (d *Dispatcher) loop() {
	defer d.loops.Done()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-d.kick:
		case <-t.C:
		}
		d.sync()
		t.Reset(d.o.Refresh)
	}
}

// sync starts a runner for each push queue, gives running ones their
// current settings and stops those of queues that lost push.
func (d *Dispatcher) sync() {
	ctx, cancel := context.WithTimeout(d.deliver, push.ReportTimeout)
	qs, err := d.store.PushQueues(ctx)
	cancel()
	if err != nil {
		d.log.Warn("push: cannot list the push queues", slog.String("error", err.Error()))
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	select {
	case <-d.stop:
		return
	default:
	}
	for name, s := range qs {
		cfg, err := configOf(s)
		if err != nil {
			d.log.Error("push: unreadable push setting", slog.String("queue", name), slog.String("error", err.Error()))
			continue
		}
		if r := d.runners[name]; r != nil {
			r.cfg.Store(cfg)
			continue
		}
		r := d.newRunner(name, cfg)
		d.runners[name] = r
		d.loops.Add(1)
		go r.run()
	}
	for name, r := range d.runners {
		if _, ok := qs[name]; !ok {
			r.halt()
			delete(d.runners, name)
		}
	}
}

// forget removes r from the runners (it stopped by itself).
func (d *Dispatcher) forget(r *runner) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.runners[r.queue] == r {
		delete(d.runners, r.queue)
	}
}

// Close stops taking jobs and waits for the deliveries in flight to be
// recorded, until ctx ends (the server's shutdown_timeout); then it
// cancels those still under way (their jobs stay running until their
// timeout, then are retried by policy). Safe to call more than once.
func (d *Dispatcher) Close(ctx context.Context) error {
	d.mu.Lock()
	select {
	case <-d.stop:
	default:
		close(d.stop)
	}
	d.mu.Unlock()
	done := make(chan struct{})
	go func() {
		d.loops.Wait()
		d.mu.Lock()
		rs := d.all
		d.mu.Unlock()
		for _, r := range rs {
			r.eng.Wait()
		}
		close(done)
	}()
	select {
	case <-done:
		d.cancel()
		return nil
	case <-ctx.Done():
		d.cancel()
		<-done
		return ctx.Err()
	}
}

// queueConfig is what a runner needs of its queue's settings.
type queueConfig struct {
	target  *push.Target
	timeout time.Duration // the delivery's
}

func configOf(s ocypod.QueueSettings) (*queueConfig, error) {
	t, err := push.UnmarshalStored(s.Push)
	if err != nil {
		return nil, err
	}
	return &queueConfig{target: &t, timeout: t.EffectiveTimeout(s.Timeout)}, nil
}
