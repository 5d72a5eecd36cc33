package httpapi

import (
	"log/slog"
	"net/http"
	"strconv"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/wire"
)

// Batches (api-v3 §9): many jobs' updates or heartbeats in one request,
// each item validated and applied on its own, as SQS's batch calls. The
// answer is 200 with one result per item, in order; only a malformed body
// (not an array of 1 to ocypod.MaxBatch objects, each with an integer
// "id") refuses the whole request, before anything is applied.

// batchItem is one decoded item: its job, its fencing attempt and its
// update, or the error the single call would have answered.
type batchItem struct {
	id  uint64
	u   ocypod.JobUpdate
	err error
}

// updateJobs serves PATCH /jobs[?take=<queue>[&count&worker&wait]]: an
// array of {"id", "attempt"?, <PATCH /job/{id} fields>}. 200 with
// [{"id","status":204|201|4xx,"next"?,"error"?}, ...]; with take, the
// batch applied first, {"results": [...], "jobs": [take objects]}. A
// missing take queue is 404 and applies nothing.
func (a *API) updateJobs(w http.ResponseWriter, r *http.Request) error {
	var take *takeParams
	if r.URL.RawQuery != "" {
		var err error
		if take, err = updateTakeParams(query(r)); err != nil {
			return err
		}
	}
	doc, err := a.readJSON(r)
	if err != nil {
		return err
	}
	items, err := decodeBatch(doc, func(d *wire.Doc, it *batchItem) error {
		rules := inputRules{strict: true}
		it.u, err = decodeJobUpdate(d, &rules)
		return err
	})
	if err != nil {
		return err
	}
	var treq *ocypod.TakeRequest
	if take != nil {
		take.req.Stop = a.drain
		treq = &take.req
	}
	todo, at := pending(items)
	var outs []ocypod.BatchOutcome
	var jobs []ocypod.NextJob
	if len(todo) > 0 || treq != nil {
		if len(todo) == 0 {
			// Every item was refused: nothing to apply, but the take
			// still goes ahead (after its queue's check, as Take does).
			jobs, err = a.store.Take(r.Context(), *treq)
		} else {
			outs, jobs, err = a.store.UpdateJobs(r.Context(), todo, treq)
		}
		if err != nil {
			return err
		}
	}
	b := make([]byte, 0, 32*len(items)+64)
	if take != nil {
		b = append(b, `{"results":`...)
	}
	b = append(b, '[')
	for i := range items {
		it := &items[i]
		if k, ok := at[i]; ok {
			it.err = outs[k].Err
			if it.err == nil {
				a.batchEvents(r, it, outs[k].Result.NextID)
			}
			b = a.appendBatchResult(r, b, i, it, outs[k].Result.NextID)
		} else {
			b = a.appendBatchResult(r, b, i, it, 0)
		}
	}
	b = append(b, ']')
	if take != nil {
		b = append(b, `,"jobs":`...)
		b = wire.AppendTakes(b, jobs)
		b = append(b, '}')
		a.logTakes(r, take, jobs)
	}
	writeJSON(w, http.StatusOK, b)
	return nil
}

// heartbeatJobs serves POST /jobs/heartbeat: an array of {"id",
// "attempt"?}. 200 with [{"id","status":204|4xx,"error"?}, ...].
func (a *API) heartbeatJobs(w http.ResponseWriter, r *http.Request) error {
	doc, err := a.readJSON(r)
	if err != nil {
		return err
	}
	items, err := decodeBatch(doc, func(d *wire.Doc, it *batchItem) error {
		return refuseUnknown(&d.Root, nil, "")
	})
	if err != nil {
		return err
	}
	todo, at := pending(items)
	var outs []ocypod.BatchOutcome
	if len(todo) > 0 {
		if outs, err = a.store.HeartbeatJobs(r.Context(), todo); err != nil {
			return err
		}
	}
	b := make([]byte, 0, 32*len(items)+2)
	b = append(b, '[')
	for i := range items {
		if k, ok := at[i]; ok {
			items[i].err = outs[k].Err
		}
		b = a.appendBatchResult(r, b, i, &items[i], 0)
	}
	writeJSON(w, http.StatusOK, append(b, ']'))
	return nil
}

// decodeBatch reads a batch body: an array of 1 to ocypod.MaxBatch objects,
// each with an integer "id" (else the whole request is refused), and an
// optional "attempt". rest decodes each item's other keys, given as the
// root of a document of their own (positions stay those of the body); its
// error, or a bad attempt, is that item's answer.
func decodeBatch(d *wire.Doc, rest func(d *wire.Doc, it *batchItem) error) ([]batchItem, error) {
	if d.Root.Kind != wire.Array || len(d.Root.Elems) == 0 {
		return nil, invalid("jobs", "expected an array of 1 to "+strconv.Itoa(ocypod.MaxBatch)+" items")
	}
	if len(d.Root.Elems) > ocypod.MaxBatch {
		return nil, invalid("jobs", "at most "+strconv.Itoa(ocypod.MaxBatch)+" items per batch")
	}
	items := make([]batchItem, len(d.Root.Elems))
	for i := range d.Root.Elems {
		v := &d.Root.Elems[i]
		malformed := invalid("jobs["+strconv.Itoa(i)+"]", `expected an object with an integer "id"`)
		if v.Kind != wire.Object {
			return nil, malformed
		}
		sub := wire.Doc{Src: d.Src, Root: wire.Value{Kind: wire.Object, End: v.End}}
		var ids, attempts []*wire.Value
		for k := range v.Members {
			m := &v.Members[k]
			switch m.Key {
			case "id":
				ids = append(ids, &m.Value)
			case "attempt":
				attempts = append(attempts, &m.Value)
			default:
				sub.Root.Members = append(sub.Root.Members, *m)
			}
		}
		if len(ids) != 1 || ids[0].Kind != wire.Number || wire.IsFloatLiteral(ids[0].Text) {
			return nil, malformed
		}
		id, err := strconv.ParseUint(ids[0].Text, 10, 64)
		if err != nil {
			return nil, malformed
		}
		it := &items[i]
		it.id = id
		switch {
		case len(attempts) > 1:
			it.err = d.Fail(attempts[1].End, "duplicate field `attempt`")
		case len(attempts) == 1 && attempts[0].Kind != wire.Null:
			n, err := strconv.ParseUint(attempts[0].Text, 10, 64)
			if attempts[0].Kind != wire.Number || err != nil {
				it.err = invalid("attempt", "must be a non-negative integer")
				break
			}
			it.u.Attempt = &n
		}
		if it.err == nil {
			attempt := it.u.Attempt
			it.err = rest(&sub, it)
			it.u.Attempt = attempt
		}
	}
	return items, nil
}

// pending returns the items left to apply, and where each one's outcome
// is (item index -> index in the returned slice).
func pending(items []batchItem) ([]ocypod.BatchUpdate, map[int]int) {
	todo := make([]ocypod.BatchUpdate, 0, len(items))
	at := make(map[int]int, len(items))
	for i := range items {
		if items[i].err == nil {
			at[i] = len(todo)
			todo = append(todo, ocypod.BatchUpdate{ID: items[i].id, Update: items[i].u})
		}
	}
	return todo, at
}

// appendBatchResult appends item i's result: {"id","status":204}, with
// next {"id","status":201,"next":n}, or {"id","status":4xx,"error":"..."}.
func (a *API) appendBatchResult(r *http.Request, b []byte, i int, it *batchItem, next uint64) []byte {
	if i > 0 {
		b = append(b, ',')
	}
	b = append(b, `{"id":`...)
	b = wire.AppendUint(b, it.id)
	switch {
	case it.err != nil:
		status, msg := statusOf(it.err)
		if status >= 500 {
			a.logFailure(r, status, it.err)
		}
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(status), 10)
		b = append(b, `,"error":`...)
		b = wire.AppendString(b, msg)
	case next != 0:
		b = append(b, `,"status":201,"next":`...)
		b = wire.AppendUint(b, next)
	default:
		b = append(b, `,"status":204`...)
	}
	return append(b, '}')
}

// batchEvents logs what an applied item did, as PATCH /job/{id} does.
func (a *API) batchEvents(r *http.Request, it *batchItem, next uint64) {
	if it.u.Status != nil {
		a.event(r, statusEvents[*it.u.Status], it.id)
	}
	if next != 0 {
		a.event(r, "job created", next, slog.String("queue", it.u.Next.Queue))
	}
}
