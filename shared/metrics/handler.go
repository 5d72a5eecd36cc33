package metrics

import (
	"bytes"
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// ContentType is the Prometheus text exposition format, version 0.0.4.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Store is what a scrape reads from Redis; *redisstore.Store has it. Each
// call is one pipelined round, bounded by the store's Redis timeout.
type Store interface {
	Info(ctx context.Context) (ocypod.ServerInfo, error)
	OldestDue(ctx context.Context) (time.Duration, error)
	// QueueMetrics returns the per-queue figures of queues (those left
	// out have none).
	QueueMetrics(ctx context.Context, queues []string) (map[string]ocypod.QueueMetrics, error)
}

// Handler answers GET and HEAD with every metric. When Redis cannot be
// read it answers 503 with the API's "Failed to connect to Redis: …" text
// and no metrics: the scraper then records the target as down, and the
// in-process figures lose nothing, being cumulative.
type Handler struct {
	store   Store
	sweeps  *Sweeps
	timeout time.Duration
	log     *slog.Logger
}

// NewHandler returns the handler reading store and sweeps (nil: no sweep
// figures). timeout bounds the Redis reads of one scrape together (0:
// only the store's own bound); log receives failed scrapes (nil discards).
func NewHandler(store Store, sweeps *Sweeps, timeout time.Duration, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{store: store, sweeps: sweeps, timeout: timeout, log: log}
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeText(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	ctx := r.Context()
	if h.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.timeout)
		defer cancel()
	}
	var buf bytes.Buffer
	if err := h.writeStored(ctx, &buf); err != nil {
		status, msg := http.StatusInternalServerError, ocypod.InternalMessage
		if ocypod.ErrorKind(err) == ocypod.KindUnavailable {
			status, msg = http.StatusServiceUnavailable, ocypod.RedactSecrets(ocypod.ErrorMessage(err))
		}
		h.log.LogAttrs(r.Context(), slog.LevelWarn, "metrics scrape failed", slog.Int("status", status),
			slog.String("error", ocypod.RedactSecrets(err.Error())))
		writeText(w, status, msg)
		return
	}
	if h.sweeps != nil {
		h.sweeps.set.WritePrometheus(&buf)
	}
	out := withHelp(buf.Bytes())
	w.Header().Set("Content-Type", ContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(out)
}

// writeStored reads the figures kept in Redis, Info and OldestDue at once,
// then the per-queue figures of the queues Info shows (a scrape waits for
// two round trips), and writes them to buf.
func (h *Handler) writeStored(ctx context.Context, buf *bytes.Buffer) error {
	var (
		wg      sync.WaitGroup
		info    ocypod.ServerInfo
		infoErr error
	)
	wg.Go(func() { info, infoErr = h.store.Info(ctx) })
	oldest, dueErr := h.store.OldestDue(ctx)
	wg.Wait()
	if infoErr != nil {
		return infoErr
	}
	if dueErr != nil {
		return dueErr
	}
	set := vm.NewSet()
	shown, omitted := queuesShown(info.Queues)
	figures, err := h.store.QueueMetrics(ctx, shown)
	if err != nil {
		return err
	}
	for _, q := range shown {
		c := info.Queues[q]
		label := `{queue="` + labelValue(q) + `"}`
		for _, st := range ocypod.AllStatuses {
			name := QueueJobs + `{queue="` + labelValue(q) + `",status="` + string(st) + `"}`
			set.NewGauge(name, nil).Set(float64(count(c, st)))
		}
		f := figures[q]
		for _, c := range []struct {
			event string
			n     uint64
		}{{"created", f.Created}, {"completed", f.Completed}, {"failed", f.Failed}, {"timed_out", f.TimedOut}} {
			set.NewCounter(QueuePrefix + c.event + "_total" + label).Set(c.n)
		}
		set.NewGauge(QueueOldestQueued+label, nil).Set(f.OldestQueued.Seconds())
	}
	set.NewGauge(QueuesOmitted, nil).Set(float64(omitted))
	s := info.Statistics
	for _, c := range []struct {
		event string
		n     uint64
	}{
		{"created", s.Created}, {"completed", s.Completed}, {"failed", s.Failed},
		{"retried", s.Retried}, {"timed_out", s.TimedOut}, {"cancelled", s.Cancelled},
	} {
		set.NewCounter(JobsPrefix + c.event + "_total").Set(c.n)
	}
	set.NewCounter(DeadLettersSkipped).Set(info.DeadLettersSkipped)
	set.NewCounter(CallbacksGivenUp).Set(info.CallbacksGivenUp)
	set.NewGauge(OldestDue, nil).Set(oldest.Seconds())
	set.WritePrometheus(buf)
	return nil
}

func writeText(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg))
}

// queuesShown are the queues QueueJobs shows: those holding jobs, at most
// MaxQueueSeries of them, the most jobs first (then by name); omitted
// counts the others that hold jobs.
func queuesShown(queues map[string]ocypod.QueueCounts) (shown []string, omitted int) {
	totals := map[string]uint64{}
	for q, c := range queues {
		if n := total(c); n > 0 {
			totals[q] = n
			shown = append(shown, q)
		}
	}
	slices.SortFunc(shown, func(a, b string) int {
		return cmp.Or(cmp.Compare(totals[b], totals[a]), strings.Compare(a, b))
	})
	if len(shown) > MaxQueueSeries {
		omitted = len(shown) - MaxQueueSeries
		shown = shown[:MaxQueueSeries]
	}
	return shown, omitted
}
