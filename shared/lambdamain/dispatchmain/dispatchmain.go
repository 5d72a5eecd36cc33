// Package dispatchmain is the composition root of the push dispatcher
// function (dispatcher/main.go, written by make generate, calls Run): on
// AWS, push queues' jobs are delivered by this function, invoked
// asynchronously right after a create into a push queue (package wake)
// and every minute by EventBridge Scheduler for scheduled jobs and
// retries.
//
// An invocation runs dispatch.DispatchOnce passes, each taking from every
// push queue as many due jobs as its push concurrency and batch allow and
// delivering them, until a pass finds nothing (and, for a wake, Linger has
// passed since the invocation started or last found work). Its budget is what is left
// of the invocation less a margin, so no delivery runs past the function's
// timeout: a delivery's timeout is cut to it, and a job whose delivery is
// cut off that way fails its attempt (push_timeout) and is retried by its
// queue's policy. If the process dies mid-delivery the job stays running
// until its timeout, then is timed out and retried; it is never in two
// deliveries at once (package dispatch). Each pass then sends the job
// callbacks that are due (dispatch.CallbacksOnce): on AWS a callback goes
// out at the next invocation after its job's end, within a minute (the
// schedule's tick) or at once when a wake comes first.
//
// Each invocation writes one CloudWatch EMF line (emf.Dispatch): jobs
// delivered, attempts failed, duration. template.yaml's PushFailuresAlarm
// fires on failures that last.
package dispatchmain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/ocyless/ocyless/shared/dispatch"
	"github.com/ocyless/ocyless/shared/lambdamain"
	"github.com/ocyless/ocyless/shared/lambdamain/wake"
	"github.com/ocyless/ocyless/shared/metrics/emf"
	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/push"
	"github.com/ocyless/ocyless/shared/push/awslambda"
	"github.com/ocyless/ocyless/shared/redisstore"
)

var _ lambda.Handler = (*Handler)(nil)

// Timing of an invocation.
const (
	// Linger is how long a woken invocation keeps looking for due jobs
	// after it started or last found some: longer than wake.DefaultInterval, so
	// a create whose wake was coalesced into an earlier one is found by
	// the run that one started.
	Linger = time.Second
	// Poll is the pause between two passes that found nothing.
	Poll = 200 * time.Millisecond
	// minMargin is the least time a run leaves before the deadline.
	minMargin = 3 * time.Second
)

// Run runs the dispatcher function. It never returns.
func Run() {
	log := lambdamain.NewLogger()
	h, err := NewHandler(os.LookupEnv, log)
	if err != nil {
		lambdamain.FailInit(log, err)
	}
	lambda.Start(h)
}

// Dispatcher is what a Handler runs (*dispatch.Dispatcher).
type Dispatcher interface {
	DispatchOnce(ctx context.Context, budget time.Duration) (int, error)
}

// Handler is the dispatcher function's Lambda handler.
type Handler struct {
	Dispatcher Dispatcher
	// Callbacks, when set, sends the job callbacks due now (at most a
	// batch) within the context's deadline and returns how many it tried:
	// each pass runs it after the deliveries.
	Callbacks func(ctx context.Context) int
	// Counts counts the outcomes the dispatcher records (NewHandler wraps
	// the store with it); nil reports none.
	Counts *Counts
	// Margin is left before the invocation's deadline.
	Margin       time.Duration
	Linger, Poll time.Duration
	Now          func() time.Time // nil means time.Now
	Log          *slog.Logger     // nil discards
	// Metrics receives the EMF line of each invocation; nil writes none.
	Metrics      io.Writer
	KeyNamespace string
	LogLevel     string
}

// Summary is the JSON result of an invocation.
type Summary struct {
	Passes    int   `json:"passes"`
	Taken     int   `json:"taken"`
	Callbacks int   `json:"callbacks"`
	Completed int   `json:"completed"`
	Failed    int   `json:"failed"`
	TimedOut  int   `json:"timed_out"`
	BudgetMS  int64 `json:"budget_ms"`
	ElapsedMS int64 `json:"elapsed_ms"`
}

// NewHandler builds the handler from the configuration in getenv: the
// store, the target policy ([push] allowed_hosts, AWS rules), a Lambda
// client for lambda targets (credentials and region from Lambda's
// variables), and the dispatcher.
func NewHandler(getenv func(string) (string, bool), log *slog.Logger) (*Handler, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg, store, err := lambdamain.Setup(getenv, log)
	if err != nil {
		return nil, err
	}
	info, _, err := lambdamain.OpenStore(store, cfg, log)
	if err != nil {
		return nil, err
	}
	if info.Upgrade {
		return nil, fmt.Errorf("namespace %q holds data of an older layout: the sweepers are upgrading it (or run make migrate); this function starts once that is done", cfg.Redis.KeyNamespace)
	}
	policy, err := lambdamain.PushPolicy(getenv, cfg)
	if err != nil {
		return nil, err
	}
	opts := push.Options{Policy: policy, Logger: log}
	if awsCfg, endpoint, err := wake.AWSConfig(getenv); err == nil {
		opts.Lambda = awslambda.New(awsCfg, endpoint)
	} else {
		log.Warn("no AWS credentials: lambda targets fail as unreachable", slog.String("error", err.Error()))
	}
	counts := &Counts{Store: store}
	d := dispatch.New(counts, dispatch.Options{Deliverer: push.New(opts), Logger: log,
		NotPush: func(err error) bool { return errors.Is(err, redisstore.ErrNotPush) }})
	ns := cfg.Redis.KeyNamespace
	if ns == "" {
		ns = redisstore.DefaultNamespace
	}
	level, _ := getenv("AWS_LAMBDA_LOG_LEVEL")
	return &Handler{
		Dispatcher: d,
		Callbacks: func(ctx context.Context) int {
			n, _ := d.CallbacksOnce(ctx, store)
			return n
		},
		Counts: counts,
		// Recording the last outcomes may take up to a Redis timeout
		// (plus one retry) after the budget ends.
		Margin:       max(minMargin, 3*cfg.Redis.Timeout+time.Second),
		Linger:       Linger,
		Poll:         Poll,
		Log:          log,
		Metrics:      os.Stdout,
		KeyNamespace: ns,
		LogLevel:     level,
	}, nil
}

// Budget is how long a run started at now may dispatch: until margin
// before the deadline (none: one Linger), never negative.
func Budget(now, deadline time.Time, margin, linger time.Duration) time.Duration {
	if deadline.IsZero() {
		return linger
	}
	return max(deadline.Sub(now)-margin, 0)
}

// Invoke handles one event: a wake ({"source":"ocyless.wake","queue":…}),
// the schedule's Input, or anything else; all dispatch alike. It returns
// the JSON of a Summary.
func (h *Handler) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	s, err := h.Run(ctx, payload)
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// Run is Invoke before JSON encoding.
func (h *Handler) Run(ctx context.Context, payload []byte) (Summary, error) {
	now, log := h.Now, h.Log
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var ev struct {
		Source string `json:"source"`
		Queue  string `json:"queue"`
	}
	_ = json.Unmarshal(payload, &ev) // only logged
	// Only a wake lingers: the creates it stands for may have been folded
	// into it. A tick stops at its first empty pass.
	linger := h.Linger
	if ev.Source != wake.Source {
		linger = 0
	}
	start := now()
	deadline, _ := ctx.Deadline()
	budget := Budget(start, deadline, h.Margin, h.Linger)
	end := start.Add(budget)
	log.DebugContext(ctx, "push dispatch started", slog.String("source", ev.Source), slog.String("queue", ev.Queue),
		slog.Duration("budget", budget))
	before := h.Counts.Snapshot()
	var s Summary
	var runErr error
	lastWork := start
	for {
		left := end.Sub(now())
		if left <= 0 {
			break
		}
		n, err := h.Dispatcher.DispatchOnce(ctx, left)
		s.Passes++
		s.Taken += n
		if err != nil {
			runErr = err
			break
		}
		if h.Callbacks != nil {
			if left = end.Sub(now()); left > 0 {
				cctx, cancel := context.WithTimeout(ctx, left)
				c := h.Callbacks(cctx)
				cancel()
				s.Callbacks += c
				n += c
			}
		}
		if n > 0 {
			lastWork = now()
			continue
		}
		if now().Sub(lastWork) >= linger {
			break
		}
		pause := min(h.Poll, end.Sub(now()))
		if pause <= 0 {
			break
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			runErr = ctx.Err()
		case <-t.C:
		}
		if runErr != nil {
			break
		}
	}
	took := now().Sub(start)
	c := h.Counts.Snapshot().Sub(before)
	s.Completed, s.Failed, s.TimedOut = c.Completed, c.Failed, c.TimedOut
	s.BudgetMS, s.ElapsedMS = budget.Milliseconds(), took.Milliseconds()
	h.writeMetrics(ctx, now, took, s)
	if runErr != nil {
		msg := ocypod.RedactSecrets(runErr.Error())
		log.ErrorContext(ctx, "push dispatch failed", slog.String("error", msg), slog.Int("taken", s.Taken))
		return s, errors.New(msg)
	}
	if s.Failed+s.TimedOut > 0 {
		log.WarnContext(ctx, "push deliveries failed", slog.Int("failed", s.Failed), slog.Int("timed_out", s.TimedOut),
			slog.Int("completed", s.Completed))
	}
	return s, nil
}

func (h *Handler) writeMetrics(ctx context.Context, now func() time.Time, took time.Duration, s Summary) {
	if h.Metrics == nil {
		return
	}
	m := emf.Dispatch{Time: now(), Level: h.LogLevel, KeyNamespace: h.KeyNamespace, Duration: took,
		Taken: s.Taken, Delivered: s.Completed, Failed: s.Failed, TimedOut: s.TimedOut}
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		m.RequestID = lc.AwsRequestID
	}
	line, err := m.Line()
	if err == nil {
		_, err = h.Metrics.Write(line)
	}
	if err != nil && h.Log != nil {
		h.Log.ErrorContext(ctx, "metrics line not written", slog.String("error", err.Error()))
	}
}

// Counts wraps the dispatcher's store and counts the outcomes it records:
// a job's status in each update the store applied.
type Counts struct {
	dispatch.Store

	mu sync.Mutex
	c  Tally
}

// Tally is a count of recorded outcomes.
type Tally struct{ Completed, Failed, TimedOut int }

// Sub is t less u.
func (t Tally) Sub(u Tally) Tally {
	return Tally{t.Completed - u.Completed, t.Failed - u.Failed, t.TimedOut - u.TimedOut}
}

// Snapshot is the tally so far (zero for a nil Counts).
func (c *Counts) Snapshot() Tally {
	if c == nil {
		return Tally{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.c
}

// UpdateJobs records outcomes through the store and counts those it
// applied (a refused completion that dispatch then fails is counted once,
// as failed).
func (c *Counts) UpdateJobs(ctx context.Context, items []ocypod.BatchUpdate, take *ocypod.TakeRequest) ([]ocypod.BatchOutcome, []ocypod.NextJob, error) {
	res, jobs, err := c.Store.UpdateJobs(ctx, items, take)
	if err != nil {
		return res, jobs, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, r := range res {
		if r.Err != nil || i >= len(items) || items[i].Update.Status == nil {
			continue
		}
		switch *items[i].Update.Status {
		case ocypod.StatusCompleted:
			c.c.Completed++
		case ocypod.StatusFailed:
			c.c.Failed++
		case ocypod.StatusTimedOut:
			c.c.TimedOut++
		}
	}
	return res, jobs, nil
}
