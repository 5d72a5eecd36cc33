// Package metrics serves the local server's GET /metrics in the Prometheus
// text exposition format: job counts per queue and status, the six
// all-time counters and the age of the oldest overdue work, all read from
// Redis when scraped, plus the sweeps' durations and counts, recorded in
// the process. Package emf writes the sweep figures of the Lambda
// sweepers; it is apart so that the functions do not link the exposition
// library.
package metrics

import (
	"strings"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/sweep"
)

// The metric names. Every one starts with "ocyless_".
const (
	// QueueJobs is a gauge {queue, status}: a queue's jobs in a status,
	// for the MaxQueueSeries queues holding the most jobs; a queue without
	// jobs has no series.
	QueueJobs = "ocyless_queue_jobs"
	// QueuesOmitted is a gauge: the queues holding jobs that QueueJobs
	// (and the other per-queue families) leave out (past MaxQueueSeries).
	QueuesOmitted = "ocyless_queues_omitted"
	// QueuePrefix+event+"_total" are counters {queue} of a queue's jobs
	// created, completed, failed and timed out today (UTC): read from the
	// day's statistics, they start again from zero at midnight UTC, a
	// counter reset that rate() and increase() take in their stride. For
	// the queues QueueJobs shows.
	QueuePrefix = "ocyless_queue_"
	// QueueOldestQueued is a gauge {queue}: how long the queue's job
	// queued longest has been queued, in seconds; 0 when none is. For the
	// queues QueueJobs shows.
	QueueOldestQueued = "ocyless_queue_oldest_queued_seconds"
	// JobsPrefix+event+"_total" are the six all-time counters of /info's
	// statistics (created, completed, failed, retried, timed_out,
	// cancelled), kept in Redis.
	JobsPrefix = "ocyless_jobs_"
	// DeadLettersSkipped is a counter, kept in Redis: dead letters
	// dropped because their dead letter queue had been deleted (the jobs
	// stay failed in their failure group).
	DeadLettersSkipped = "ocyless_dead_letters_skipped_total"
	// CallbacksGivenUp is a counter, kept in Redis: job callbacks given up
	// after 24 hours of failed tries.
	CallbacksGivenUp = "ocyless_callbacks_given_up_total"
	// OldestDue is a gauge: how long the oldest overdue work (a timeout, a
	// retry or scheduled job, an expiry, an outbox entry) has waited for a
	// sweep, in seconds; 0 when nothing is overdue.
	OldestDue = "ocyless_oldest_due_seconds"
	// SweepDuration is a histogram {sweep}: how long each sweep pass took.
	SweepDuration = "ocyless_sweep_duration_seconds"
	// SweepJobs is a counter {sweep}: the jobs (and schedules fired, outbox
	// effects applied, dropped jobs of deleted queues) the sweeps changed.
	SweepJobs = "ocyless_sweep_jobs_total"
	// SweepErrors is a counter {sweep}: passes that failed.
	SweepErrors = "ocyless_sweep_errors_total"
)

// Help is each family's HELP text (the exposition library writes the
// HELP lines empty; ServeHTTP fills them in).
var Help = map[string]string{
	QueueJobs:                       "Jobs of a queue in a status (the 500 queues holding the most jobs; a queue without jobs has no series).",
	QueuesOmitted:                   "Queues holding jobs that ocyless_queue_jobs and the other per-queue series leave out (past their 500 queues).",
	QueuePrefix + "created_total":   "Jobs of a queue created today (UTC; from zero again at midnight UTC), for the queues ocyless_queue_jobs shows.",
	QueuePrefix + "completed_total": "Jobs of a queue completed today (UTC; from zero again at midnight UTC), for the queues ocyless_queue_jobs shows.",
	QueuePrefix + "failed_total":    "Job attempts of a queue that failed today (UTC; from zero again at midnight UTC; timeouts apart), for the queues ocyless_queue_jobs shows.",
	QueuePrefix + "timed_out_total": "Job attempts of a queue that timed out today (UTC; from zero again at midnight UTC), for the queues ocyless_queue_jobs shows.",
	QueueOldestQueued:               "Seconds the queue's job queued longest has been queued (0 when none is), for the queues ocyless_queue_jobs shows.",
	JobsPrefix + "created_total":    "Jobs created, all time (GET /info's total_jobs_created).",
	JobsPrefix + "completed_total":  "Jobs completed, all time.",
	JobsPrefix + "failed_total":     "Job attempts that failed, all time.",
	JobsPrefix + "retried_total":    "Jobs queued again for a retry, all time.",
	JobsPrefix + "timed_out_total":  "Job attempts that timed out, all time.",
	JobsPrefix + "cancelled_total":  "Jobs cancelled, all time.",
	DeadLettersSkipped:              "Dead letters dropped because their dead letter queue had been deleted (the jobs stay failed).",
	CallbacksGivenUp:                "Job callbacks given up after 24 hours of failed tries.",
	OldestDue:                       "Seconds the oldest overdue work (a timeout, retry, scheduled job, expiry or outbox effect) has waited for a sweep; 0 when none.",
	SweepDuration:                   "Seconds each sweep pass took, by sweep kind.",
	SweepJobs:                       "Jobs, schedules and outbox effects the sweeps changed, by sweep kind.",
	SweepErrors:                     "Sweep passes that failed, by sweep kind.",
}

// withHelp fills in the empty HELP lines of an exposition with Help's
// texts.
func withHelp(b []byte) []byte {
	lines := strings.SplitAfter(string(b), "\n")
	var out strings.Builder
	out.Grow(len(b) + 1024)
	for _, l := range lines {
		if name, ok := strings.CutPrefix(strings.TrimSuffix(l, "\n"), "# HELP "); ok && !strings.Contains(name, " ") {
			if h, ok := Help[name]; ok {
				l = "# HELP " + name + " " + h + "\n"
			}
		}
		out.WriteString(l)
	}
	return []byte(out.String())
}

// MaxQueueSeries bounds the queues QueueJobs and the other per-queue
// families show (13 series each: 8 statuses, 4 counters, 1 age), so a
// scrape stays small whatever the number of queues.
const MaxQueueSeries = 500

// SweepBuckets are the upper bounds, in seconds, of SweepDuration: a pass
// over a batch of due jobs takes milliseconds, and one that keeps finding
// work runs until its budget (50 s by default).
var SweepBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

func init() {
	// # TYPE lines tell counters, gauges and histograms apart for scrapers
	// that keep metadata.
	vm.ExposeMetadata(true)
}

// Sweeps records the sweep passes of this process. Its zero value is not
// usable; NewSweeps makes one. It is safe for concurrent use.
type Sweeps struct {
	set   *vm.Set
	kinds map[sweep.Kind]sweepSeries
}

type sweepSeries struct {
	took       *vm.PrometheusHistogram
	jobs, errs *vm.Counter
}

// NewSweeps returns a recorder with every sweep kind at zero, so each
// series exists before the first pass.
func NewSweeps() *Sweeps {
	s := &Sweeps{set: vm.NewSet(), kinds: map[sweep.Kind]sweepSeries{}}
	for _, k := range sweep.Kinds {
		l := `{sweep="` + labelValue(string(k)) + `"}`
		s.kinds[k] = sweepSeries{
			took: s.set.NewPrometheusHistogramExt(SweepDuration+l, SweepBuckets),
			jobs: s.set.NewCounter(SweepJobs + l),
			errs: s.set.NewCounter(SweepErrors + l),
		}
	}
	return s
}

// Observe records one pass of sweep k: how long it took, what it did and
// whether it failed. Kinds outside sweep.Kinds are ignored.
func (s *Sweeps) Observe(k sweep.Kind, took time.Duration, t sweep.Totals, err error) {
	ser, ok := s.kinds[k]
	if !ok {
		return
	}
	ser.took.Update(took.Seconds())
	ser.jobs.Add(t.Jobs())
	if err != nil {
		ser.errs.Inc()
	}
}

// labelValue escapes v for a quoted label value of the text format.
// Queue names cannot hold these characters today; the escaping keeps a
// name that somehow does from breaking the exposition.
func labelValue(v string) string {
	return labelEscaper.Replace(v)
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// total is c's jobs in every status.
func total(c ocypod.QueueCounts) uint64 {
	var n uint64
	for _, st := range ocypod.AllStatuses {
		n += count(c, st)
	}
	return n
}

// count is c's figure for status st.
func count(c ocypod.QueueCounts, st ocypod.Status) uint64 {
	switch st {
	case ocypod.StatusQueued:
		return c.Queued
	case ocypod.StatusRunning:
		return c.Running
	case ocypod.StatusFailed:
		return c.Failed
	case ocypod.StatusCompleted:
		return c.Completed
	case ocypod.StatusCancelled:
		return c.Cancelled
	case ocypod.StatusTimedOut:
		return c.TimedOut
	case ocypod.StatusScheduled:
		return c.Scheduled
	case ocypod.StatusWaiting:
		return c.Waiting
	}
	return 0
}
