package lambdamain

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/ocyless/ocyless/shared/metrics/emf"
	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/sweep"
)

// minDeadlineMargin is the least time a sweep run leaves before the
// invocation's deadline.
const minDeadlineMargin = 3 * time.Second

// SweepHandler is the Lambda handler of one sweep kind (it implements
// aws-lambda-go's lambda.Handler). Each invocation sweeps what is due and
// then, within its budget, keeps sweeping as jobs become due (sweep.Runner).
type SweepHandler struct {
	Runner sweep.Runner
	Kind   sweep.Kind
	// Budget is the configured budget (OCYPOD_SWEEP_BUDGET); an invocation
	// also stops Margin before its deadline.
	Budget, Margin time.Duration
	Now            func() time.Time // nil means time.Now
	Log            *slog.Logger     // nil discards
	// Upgrade, when set, brings the namespace's layout up to this
	// version's first, within the budget (redisstore.Store.Upgrade: it
	// works, or waits for the process that holds the upgrade lock and takes
	// over if that one stops); the sweep runs only once it reports done.
	Upgrade func(ctx context.Context, budget time.Duration) (bool, error)
	// upgraded is set once Upgrade reported done (invocations may overlap).
	upgraded atomic.Bool

	// Metrics, when set, receives one CloudWatch Embedded Metric Format
	// line per invocation (package emf); Lambda sends stdout to CloudWatch
	// Logs, which extracts the metrics.
	Metrics io.Writer
	// Due reads the age of the oldest overdue work for that line; nil
	// leaves OldestDueJobAgeSeconds out.
	Due interface {
		OldestDue(ctx context.Context) (time.Duration, error)
	}
	// KeyNamespace is the line's KeyNamespace dimension.
	KeyNamespace string
	// LogLevel is the function's application log level
	// (AWS_LAMBDA_LOG_LEVEL), which the line's level must pass.
	LogLevel string
}

// Summary is the JSON result of one sweeper invocation.
type Summary struct {
	Sweep     sweep.Kind `json:"sweep"`
	BudgetMS  int64      `json:"budget_ms"`
	ElapsedMS int64      `json:"elapsed_ms"`
	sweep.Totals
}

// NewSweepHandler builds the handler of the sweep kind from the
// configuration in getenv. A nil log discards logs.
func NewSweepHandler(getenv func(string) (string, bool), kind sweep.Kind, log *slog.Logger) (*SweepHandler, error) {
	log = orDiscard(log)
	if _, err := sweep.ParseKind(string(kind)); err != nil {
		return nil, err
	}
	cfg, store, err := Setup(getenv, log)
	if err != nil {
		return nil, err
	}
	info, checked, err := OpenStore(store, cfg, log)
	if err != nil {
		return nil, err
	}
	ns := cfg.Redis.KeyNamespace
	if ns == "" {
		ns = redisstore.DefaultNamespace
	}
	level, _ := getenv("AWS_LAMBDA_LOG_LEVEL")
	h := &SweepHandler{
		Runner: sweep.Runner{Store: store, Logger: log},
		Kind:   kind,
		Budget: cfg.Sweep.Budget,
		// A sweep call still running when the budget ends may take up to a
		// Redis timeout (plus one retry) to give up, and reading the oldest
		// due work for the metrics up to one more.
		Margin:       max(minDeadlineMargin, 3*cfg.Redis.Timeout+time.Second),
		Log:          log,
		Metrics:      os.Stdout,
		Due:          store,
		KeyNamespace: ns,
		LogLevel:     level,
	}
	if info.Upgrade || !checked {
		// An older layout (or one not checked yet: Upgrade reports done
		// at once when there is nothing to do) is upgraded before any
		// sweep.
		h.Upgrade = store.Upgrade
	}
	return h, nil
}

// SweepBudget is how long a run started at now may keep sweeping: the
// configured budget, cut so that it ends margin before the invocation's
// deadline (zero deadline: none), and never negative. A zero budget still
// sweeps once.
func SweepBudget(configured time.Duration, now, deadline time.Time, margin time.Duration) time.Duration {
	b := configured
	if !deadline.IsZero() {
		b = min(b, deadline.Sub(now)-margin)
	}
	return max(b, 0)
}

// Invoke handles one scheduled event. The payload's content does not
// matter: an explicit Input such as {"sweep":"timeouts"}, {}, EventBridge
// Scheduler's default envelope (whose detail is the string "{}"), a
// classic EventBridge "Scheduled Event" or no JSON at all all run the
// sweep. It returns the JSON of a Summary.
func (h *SweepHandler) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	s, err := h.Run(ctx, payload)
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// Run is Invoke before JSON encoding.
func (h *SweepHandler) Run(ctx context.Context, payload []byte) (Summary, error) {
	now, log := h.Now, orDiscard(h.Log)
	if now == nil {
		now = time.Now
	}
	var ev struct {
		Source     string `json:"source"`
		DetailType string `json:"detail-type"`
		Sweep      string `json:"sweep"`
	}
	_ = json.Unmarshal(payload, &ev) // best effort: only logged
	if ev.Sweep != "" && ev.Sweep != string(h.Kind) {
		log.WarnContext(ctx, "event names another sweep; running this function's",
			slog.String("event_sweep", ev.Sweep), slog.String("sweep", string(h.Kind)))
	}
	start := now()
	deadline, _ := ctx.Deadline()
	budget := SweepBudget(h.Budget, start, deadline, h.Margin)
	log.DebugContext(ctx, "sweep started", slog.String("sweep", string(h.Kind)),
		slog.Duration("budget", budget), slog.String("source", ev.Source), slog.String("detail_type", ev.DetailType))

	if h.Upgrade != nil && !h.upgraded.Load() {
		// (A run left no time still does one step of it: a zero budget
		// would be Upgrade's unbounded one.)
		done, err := h.Upgrade(ctx, max(budget, time.Nanosecond))
		if err != nil {
			msg := ocypod.RedactSecrets(err.Error())
			log.ErrorContext(ctx, "layout upgrade failed", slog.String("error", msg))
			took := now().Sub(start)
			h.writeMetrics(ctx, now, took, sweep.Totals{})
			return Summary{Sweep: h.Kind, BudgetMS: budget.Milliseconds(), ElapsedMS: took.Milliseconds()}, errors.New(msg)
		}
		if !done {
			log.InfoContext(ctx, "layout upgrade unfinished within the budget: no sweep yet; the next run goes on", slog.String("sweep", string(h.Kind)))
			return Summary{Sweep: h.Kind, BudgetMS: budget.Milliseconds(), ElapsedMS: now().Sub(start).Milliseconds()}, nil
		}
		h.upgraded.Store(true)
		budget = SweepBudget(h.Budget, now(), deadline, h.Margin)
	}
	tot, err := h.Runner.Run(ctx, h.Kind, budget)
	took := now().Sub(start)
	s := Summary{Sweep: h.Kind, BudgetMS: budget.Milliseconds(), ElapsedMS: took.Milliseconds(), Totals: tot}
	h.writeMetrics(ctx, now, took, tot)
	if err != nil {
		msg := ocypod.RedactSecrets(err.Error())
		log.ErrorContext(ctx, "sweep failed", slog.String("sweep", string(h.Kind)), slog.String("error", msg),
			slog.Int("batches", tot.Batches), slog.Int("jobs", tot.Jobs()))
		return s, errors.New(msg)
	}
	return s, nil
}

// writeMetrics writes the invocation's EMF line, failed runs included: the
// sweep's duration and counts, and the age of the oldest overdue work as
// it stands after the sweep (so a sweeper that keeps up reports about 0).
func (h *SweepHandler) writeMetrics(ctx context.Context, now func() time.Time, took time.Duration, tot sweep.Totals) {
	if h.Metrics == nil {
		return
	}
	log := orDiscard(h.Log)
	m := emf.Sweep{Level: h.LogLevel, KeyNamespace: h.KeyNamespace, Kind: h.Kind, Duration: took, Totals: tot}
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		m.RequestID = lc.AwsRequestID
	}
	if h.Due != nil {
		if age, err := h.Due.OldestDue(ctx); err == nil {
			m.OldestDue = &age
		} else {
			log.WarnContext(ctx, "oldest due work not read; the metrics line leaves it out",
				slog.String("sweep", string(h.Kind)), slog.String("error", ocypod.RedactSecrets(err.Error())))
		}
	}
	m.Time = now()
	line, err := m.Line()
	if err == nil {
		_, err = h.Metrics.Write(line)
	}
	if err != nil {
		log.ErrorContext(ctx, "metrics line not written", slog.String("sweep", string(h.Kind)), slog.String("error", err.Error()))
	}
}
