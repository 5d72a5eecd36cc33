package httpapi

import (
	"log/slog"
	"net/http"
	"strconv"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/wire"
)

// statusEvents names the job event a successful status change is.
var statusEvents = map[ocypod.Status]string{
	ocypod.StatusQueued:    "job requeued",
	ocypod.StatusRunning:   "job started",
	ocypod.StatusCompleted: "job completed",
	ocypod.StatusFailed:    "job failed",
	ocypod.StatusTimedOut:  "job timed out",
	ocypod.StatusCancelled: "job cancelled",
}

// updateJob serves PATCH /job/{id}[?attempt=n][&take=<queue>[&count&worker
// &wait]]: {"status":..., "output":...} and the extension fields, all
// optional. 204; 201 with Location and the new id when a "next" job was
// created; with take, 200 and the next take object(s) from that queue, or
// 204 when there is none. Even an empty update is checked against the
// job's existence by the store.
func (a *API) updateJob(w http.ResponseWriter, r *http.Request) error {
	id, err := jobID(r)
	if err != nil {
		return err
	}
	q := query(r)
	var attempt *uint64
	var take *takeParams
	if r.URL.RawQuery != "" {
		if attempt, err = attemptParam(q); err != nil {
			return err
		}
		if take, err = updateTakeParams(q); err != nil {
			return err
		}
	}
	doc, err := a.readJSON(r)
	if err != nil {
		return err
	}
	rules, err := a.checkQuery("update-job", r)
	if err != nil {
		return err
	}
	u, err := decodeJobUpdate(doc, &rules)
	if err != nil {
		return err
	}
	u.Attempt = attempt
	var treq *ocypod.TakeRequest
	if take != nil {
		take.req.Stop, take.req.Why = a.drain, &take.why
		treq = &take.req
	}
	res, jobs, err := a.store.UpdateJob(r.Context(), id, u, treq)
	if err != nil {
		return err
	}
	if u.Status != nil {
		a.event(r, statusEvents[*u.Status], id)
	}
	if res.NextID != 0 {
		a.event(r, "job created", res.NextID, slog.String("queue", u.Next.Queue))
		w.Header()["Location"] = []string{"/job/" + strconv.FormatUint(res.NextID, 10)}
	}
	switch {
	case take != nil:
		// The take's answer; a follow-up job still shows in Location.
		a.answerTake(w, r, take, jobs, true)
	case res.NextID != 0:
		writeJSON(w, http.StatusCreated, wire.AppendUint(nil, res.NextID))
	default:
		w.WriteHeader(http.StatusNoContent)
	}
	return nil
}

// updateTakeParams reads PATCH's take=<queue> and the take parameters
// that go with it (nil without take; count, worker or wait without take
// is a 400).
func updateTakeParams(q wire.Query) (*takeParams, error) {
	queue, ok, err := q.Get("take")
	if err != nil {
		return nil, err
	}
	if !ok {
		for _, key := range []string{"count", "worker", "wait"} {
			if q.Has(key) {
				return nil, invalid(key, "only with take")
			}
		}
		return nil, nil
	}
	if !ocypod.ValidQueueName(queue) {
		return nil, ocypod.InvalidQueueName()
	}
	t, err := parseTake(q, []string{queue})
	if err != nil {
		return nil, err
	}
	return &t, nil
}
