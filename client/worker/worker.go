package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ocyless/ocyless/client"
)

// Handler does one job's work. The output it returns completes the job (a
// json.RawMessage as it is, anything else through encoding/json; nil
// leaves the output as it is); an error fails it, retried by the job's
// policy unless wrapped with Permanent, RetryAt or RetryIn. A panic fails
// the job too, in failure group PanicGroup.
//
// ctx ends when the job is lost (cause ErrJobLost) or at the end of the
// shutdown grace period (cause ErrShutdown); read the cause with
// context.Cause. It does not end when Run's context does: a running
// handler may finish its job during the grace period.
type Handler func(ctx context.Context, job *Job) (output any, err error)

// Options configure a Worker.
type Options struct {
	// Queues to take jobs from (at least one). With several, Order picks
	// among them ("" is the server's OrderOrdered: the first queue that
	// has a job).
	Queues []string
	Order  client.Order
	// Concurrency is how many handlers run at once; 0 means 1. With
	// BatchSize, it is how many batches run at once.
	Concurrency int
	// BatchSize, when set (1 to 100), runs the jobs in batches: the worker
	// takes up to BatchSize jobs in one request, runs their handlers at
	// once, sends their heartbeats together (POST /jobs/heartbeat) and,
	// when every handler of the batch has returned, reports them together
	// and takes the next batch in the same request (PATCH /jobs?take=):
	// one request per batch. Each report stays fenced by its job's
	// attempt. With HeartbeatInterval 0 the batch's heartbeats follow the
	// heartbeat_timeout of its first job.
	BatchSize int
	// Name is the worker name recorded on the jobs it takes and listed by
	// GET /workers: 1 to 128 printable characters. "" makes one from the
	// host name, the process id and a random suffix. Names should be
	// unique: the server's worker registry counts jobs by name.
	Name string
	// Wait is the long-poll wait of a take (at most client.MaxWait, the
	// default).
	Wait time.Duration
	// HeartbeatInterval is how often a running job's heartbeat is sent.
	// 0 reads each job's heartbeat_timeout once it is taken (one GET) and
	// sends one every third of it, none when it is 0s; a negative value
	// sends none.
	HeartbeatInterval time.Duration
	// ShutdownGrace is how long running handlers may go on once Run's
	// context ends; 0 means 30s. Jobs still running then are released.
	ShutdownGrace time.Duration
	// ErrorBackoff is the first wait after a take failed (doubled up to
	// 32 times while it keeps failing); 0 means 1s.
	ErrorBackoff time.Duration
	// Logger receives a line per failed request and per job that failed,
	// was lost or released; nil discards them.
	Logger *slog.Logger
	// OnFinish, when set, is called once per job taken, after the job's
	// outcome was reported: err is nil when it completed, else the
	// handler's error (a report that failed joined to it), ErrJobLost or
	// ErrShutdown.
	OnFinish func(job *Job, err error)
}

// Worker takes jobs and runs a Handler on each.
type Worker struct {
	c       *client.Client
	h       Handler
	o       Options
	running atomic.Bool

	// newTicker makes the heartbeat ticker; tests replace it.
	newTicker func(d time.Duration) (<-chan time.Time, func())
	// reportTimeout bounds the reports of one job (retries included).
	reportTimeout time.Duration
}

// Defaults of Options.
const (
	defaultGrace        = 30 * time.Second
	defaultErrorBackoff = time.Second
	reportTimeout       = 30 * time.Second
	maxTakeCount        = 100
)

// New returns a worker running h on the jobs of opts.Queues taken through
// c. It checks the options; Run starts it.
func New(c *client.Client, h Handler, opts Options) (*Worker, error) {
	switch {
	case c == nil || h == nil:
		return nil, errors.New("worker: nil client or handler")
	case len(opts.Queues) == 0:
		return nil, errors.New("worker: no queue")
	case opts.Concurrency < 0 || opts.ShutdownGrace < 0 || opts.ErrorBackoff < 0 || opts.Wait < 0:
		return nil, errors.New("worker: negative Concurrency, ShutdownGrace, ErrorBackoff or Wait")
	case opts.BatchSize < 0 || opts.BatchSize > maxTakeCount:
		return nil, fmt.Errorf("worker: BatchSize %d: want 0 to %d", opts.BatchSize, maxTakeCount)
	case opts.Wait > client.MaxWait:
		return nil, fmt.Errorf("worker: Wait %s is over client.MaxWait", opts.Wait)
	}
	if opts.Name == "" {
		opts.Name = defaultName()
	}
	if !printable(opts.Name, 128) {
		return nil, fmt.Errorf("worker: Name %q: want 1 to 128 printable characters", opts.Name)
	}
	opts.Concurrency = max(opts.Concurrency, 1)
	if opts.Wait == 0 {
		opts.Wait = client.MaxWait
	}
	if opts.ShutdownGrace == 0 {
		opts.ShutdownGrace = defaultGrace
	}
	if opts.ErrorBackoff == 0 {
		opts.ErrorBackoff = defaultErrorBackoff
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Worker{c: c, h: h, o: opts, newTicker: realTicker, reportTimeout: reportTimeout}, nil
}

// Name is the worker's name.
func (w *Worker) Name() string { return w.o.Name }

func realTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// defaultName is "<host>-<pid>-<random>", unique enough that two
// processes never share a name.
func defaultName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "worker"
	}
	var b [3]byte
	_, _ = rand.Read(b[:])
	name := host + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
	if r := []rune(name); len(r) > 128 {
		name = string(r[len(r)-128:])
	}
	return name
}

func printable(s string, max int) bool {
	if s == "" || !utf8.ValidString(s) || utf8.RuneCountInString(s) > max {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// run is the state of one Run.
type run struct {
	w     *Worker
	log   *slog.Logger
	ctx   context.Context // Run's: ends taking
	base  context.Context // for handlers and reports: outlives ctx
	slots chan struct{}   // one per running lane or slot held by a take
	lanes sync.WaitGroup

	mu      sync.Mutex
	tasks   map[*task]struct{}
	expired bool // the grace period is over: new tasks are released unrun
}

// Run takes jobs and runs the handler on them until ctx ends, then shuts
// down: it takes no more jobs (a take in flight is cut short), lets the
// running handlers finish within ShutdownGrace and report their outcome,
// releases the jobs whose handlers are still running after that (see
// ErrShutdown), and returns nil. A handler that ignores its context may
// still be running then; its result is dropped. A failed take is logged
// and tried again after ErrorBackoff. Run may be called once at a time.
func (w *Worker) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("worker: Run is already running")
	}
	defer w.running.Store(false)
	r := &run{w: w, log: w.o.Logger.With(slog.String("worker", w.o.Name)), ctx: ctx,
		base: context.WithoutCancel(ctx), slots: make(chan struct{}, w.o.Concurrency), tasks: map[*task]struct{}{}}
	if w.o.BatchSize > 0 {
		r.pollBatches()
	} else {
		r.poll()
	}
	return r.shutdown()
}

// poll takes jobs while slots are free, until Run's context ends.
func (r *run) poll() {
	backoff := r.w.o.ErrorBackoff
	for {
		select {
		case r.slots <- struct{}{}:
		case <-r.ctx.Done():
			return
		}
		n := 1
	more:
		for n < min(cap(r.slots), maxTakeCount) {
			select {
			case r.slots <- struct{}{}:
				n++
			default:
				break more
			}
		}
		jobs, err := r.take(n)
		for range n - len(jobs) {
			<-r.slots
		}
		for i := range jobs {
			r.start(&jobs[i])
		}
		if err == nil {
			backoff = r.w.o.ErrorBackoff
			continue
		}
		if !r.takeFailed(err, &backoff) {
			return
		}
	}
}

// takeFailed logs a failed take and waits backoff before the next one,
// doubling it up to 32 times ErrorBackoff. It reports false when Run's
// context ended (the take failed because of it, or during the wait).
func (r *run) takeFailed(err error, backoff *time.Duration) bool {
	if r.ctx.Err() != nil {
		return false
	}
	r.log.LogAttrs(r.ctx, slog.LevelError, "take failed", slog.Any("queues", r.w.o.Queues), slog.String("error", err.Error()))
	t := time.NewTimer(*backoff)
	select {
	case <-t.C:
	case <-r.ctx.Done():
		t.Stop()
		return false
	}
	*backoff = min(*backoff*2, r.w.o.ErrorBackoff<<5)
	return true
}

func (r *run) take(n int) ([]client.TakenJob, error) {
	o := client.TakeOptions{Count: n, Worker: r.w.o.Name, Wait: r.w.o.Wait}
	if len(r.w.o.Queues) == 1 {
		return r.w.c.Take(r.ctx, r.w.o.Queues[0], o)
	}
	return r.w.c.TakeFrom(r.ctx, r.w.o.Queues, r.w.o.Order, o)
}

// takeQueue is the queue a completion may take the next job from in the
// same request, "" for none: the only queue, or the first of ordered
// queues (a take from several queues would pick it first anyway; when it
// is empty the lane goes back to the long poll over all of them). Round
// robin takes stay with the long poll, which alone rotates fairly.
func (r *run) takeQueue() string {
	if r.ctx.Err() != nil {
		return ""
	}
	if len(r.w.o.Queues) == 1 || r.w.o.Order != client.OrderRoundRobin {
		return r.w.o.Queues[0]
	}
	return ""
}

// start runs a lane on a slot the caller holds: the job, then each job
// its completion took, until one completes with nothing to take.
func (r *run) start(j *client.TakenJob) {
	r.lanes.Add(1)
	go func() {
		defer func() {
			<-r.slots
			r.lanes.Done()
		}()
		for j != nil {
			j = r.work(j)
		}
	}()
}

// track registers a task that is about to run, for shutdown to release;
// false once the grace period is over (a completion took the job late).
func (r *run) track(t *task) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.expired {
		return false
	}
	r.tasks[t] = struct{}{}
	return true
}

func (r *run) untrack(t *task) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.tasks, t)
}

// shutdown waits for the lanes for up to the grace period, then releases
// the jobs still running and waits for the reports under way.
func (r *run) shutdown() error {
	idle := make(chan struct{})
	go func() {
		r.lanes.Wait()
		close(idle)
	}()
	grace := time.NewTimer(r.w.o.ShutdownGrace)
	defer grace.Stop()
	select {
	case <-idle:
		return nil
	case <-grace.C:
	}
	r.mu.Lock()
	r.expired = true
	tasks := make([]*task, 0, len(r.tasks))
	for t := range r.tasks {
		tasks = append(tasks, t)
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, t := range tasks {
		wg.Go(func() {
			if t.claim() {
				t.cancel(ErrShutdown)
				r.release(t)
			}
			<-t.reported
		})
	}
	wg.Wait()
	return nil
}
