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
	// QueueJobs is a gauge {queue, status}: a queue's jobs in a status.
	QueueJobs = "ocyless_queue_jobs"
	// JobsPrefix+event+"_total" are the six all-time counters of /info's
	// statistics (created, completed, failed, retried, timed_out,
	// cancelled), kept in Redis.
	JobsPrefix = "ocyless_jobs_"
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
