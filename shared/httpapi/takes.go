package httpapi

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/wire"
)

// nextJob serves GET /queue/{name}/job[?wait&count&worker]: takes the
// oldest queued job (highest priority first), now running. Without count
// or worker the answer is Ocypod's {"id":..,"input":..}; with either, the
// take object {"id","input","attempt","queue"}, and with count always an
// array of them. Nothing to take answers 204: after the long-poll wait if
// one was given, else after Options.NextJobDelay (cut short if the client
// goes away).
func (a *API) nextJob(w http.ResponseWriter, r *http.Request) error {
	name, err := queueName(r)
	if err != nil {
		return err
	}
	t := takeParams{req: ocypod.TakeRequest{Queues: []string{name}, Count: 1}}
	if r.URL.RawQuery != "" {
		if t, err = parseTake(query(r), []string{name}); err != nil {
			return err
		}
	}
	t.req.Stop, t.req.Why = a.drain, &t.why
	jobs, err := a.store.Take(r.Context(), t.req)
	if err != nil {
		return err
	}
	if len(jobs) == 0 && !t.wait {
		a.pause(r)
	}
	a.answerTake(w, r, &t, jobs, false)
	return nil
}

// takeJobs serves GET /job?queues=a,b[&order&wait&count&worker]: takes
// from several queues, in the given order (order=ordered, the default) or
// starting at a different queue each call (order=round_robin). Its take
// objects always have the four keys; with count the answer is an array.
// Nothing to take answers 204 as nextJob does.
func (a *API) takeJobs(w http.ResponseWriter, r *http.Request) error {
	q := query(r)
	queues, err := queuesParam(q)
	if err != nil {
		return err
	}
	t, err := parseTake(q, queues)
	if err != nil {
		return err
	}
	order, ok, err := q.Get("order")
	if err != nil {
		return err
	}
	switch {
	case !ok || order == "ordered":
	case order == "round_robin":
		t.req.RoundRobin = true
	default:
		return invalid("order", `must be "ordered" or "round_robin"`)
	}
	t.req.Stop, t.req.Why = a.drain, &t.why
	jobs, err := a.store.Take(r.Context(), t.req)
	if err != nil {
		return err
	}
	if len(jobs) == 0 && !t.wait {
		a.pause(r)
	}
	a.answerTake(w, r, &t, jobs, true)
	return nil
}

// EmptyReasonHeader names, on a take's 204, the limit that held the
// queue's jobs back: "paused", "concurrency" or "rate_limit".
const EmptyReasonHeader = "Ocyless-Empty-Reason"

// answerTake writes taken jobs: 204 when none; with count an array of take
// objects; else one object, Ocypod's two keys unless four were asked for
// (a worker, or full: GET /job and PATCH ?take=).
func (a *API) answerTake(w http.ResponseWriter, r *http.Request, t *takeParams, jobs []ocypod.NextJob, full bool) {
	a.logTakes(r, t, jobs)
	switch {
	case len(jobs) == 0:
		if t.why != "" {
			// Why a queue with jobs gave none: paused, at its
			// concurrency, or out of rate-limit tokens.
			w.Header().Set(EmptyReasonHeader, t.why)
		}
		w.WriteHeader(http.StatusNoContent)
	case t.count:
		writeJSON(w, http.StatusOK, wire.AppendTakes(make([]byte, 0, 128*len(jobs)), jobs))
	case t.worker || full:
		writeJSON(w, http.StatusOK, wire.AppendTake(make([]byte, 0, 128), &jobs[0]))
	default:
		writeJSON(w, http.StatusOK, wire.AppendNextJob(make([]byte, 0, 64+len(jobs[0].Input)), &jobs[0]))
	}
}

// logTakes logs a "job started" event for each job taken.
func (a *API) logTakes(r *http.Request, t *takeParams, jobs []ocypod.NextJob) {
	for i := range jobs {
		queue := jobs[i].Queue
		if queue == "" {
			queue = t.req.Queues[0]
		}
		if t.worker {
			a.event(r, "job started", jobs[i].ID, slog.String("queue", queue), slog.String("worker", t.req.Worker))
		} else {
			a.event(r, "job started", jobs[i].ID, slog.String("queue", queue))
		}
	}
}

// pause waits Options.NextJobDelay or until the request is cancelled.
func (a *API) pause(r *http.Request) {
	if a.opts.NextJobDelay <= 0 {
		return
	}
	t := time.NewTimer(a.opts.NextJobDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	case <-a.drain:
	}
}
