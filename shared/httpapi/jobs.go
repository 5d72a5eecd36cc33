package httpapi

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/wire"
)

// getJob serves GET /job/{id}[?fields=a,b][&wait=d]: the job's fields,
// Ocypod's 17 then the extension fields it holds a non-default value of
// (wire.DefaultJobFields), or those requested in the requested order, each
// once. With wait, it answers once the job has ended for good or the wait
// is over, with the job as it is then (200 either way).
func (a *API) getJob(w http.ResponseWriter, r *http.Request) error {
	id, err := jobID(r)
	if err != nil {
		return err
	}
	q := query(r)
	fields, err := parseFields(q)
	if err != nil {
		return err
	}
	wait, waiting, err := waitParam(q)
	if err != nil {
		return err
	}
	var job *ocypod.Job
	if waiting {
		job, err = a.store.WaitJob(r.Context(), id, wait, a.drain)
	} else {
		job, err = a.store.GetJob(r.Context(), id)
	}
	if err != nil {
		return err
	}
	if job == nil {
		return ocypod.JobNotFound(id)
	}
	writeJSON(w, http.StatusOK, wire.AppendJob(make([]byte, 0, 512), job, fields))
	return nil
}

// jobStatus serves GET /job/{id}/status: the status as a JSON string.
func (a *API) jobStatus(w http.ResponseWriter, r *http.Request) error {
	id, err := jobID(r)
	if err != nil {
		return err
	}
	st, err := a.store.JobStatus(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.AppendString(nil, string(st)))
	return nil
}

// getJobOutput serves GET /job/{id}/output: the output, null if none.
func (a *API) getJobOutput(w http.ResponseWriter, r *http.Request) error {
	id, err := jobID(r)
	if err != nil {
		return err
	}
	out, err := a.store.JobOutput(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.AppendRaw(nil, out))
	return nil
}

// setJobOutput serves PUT /job/{id}/output[?attempt=n]: replaces a running
// job's output with the body, any JSON value (null included). 204.
func (a *API) setJobOutput(w http.ResponseWriter, r *http.Request) error {
	id, err := jobID(r)
	if err != nil {
		return err
	}
	attempt, err := attemptParam(query(r))
	if err != nil {
		return err
	}
	doc, err := a.readJSON(r)
	if err != nil {
		return err
	}
	if err := a.store.SetJobOutput(r.Context(), id, decodeOutput(doc), attempt); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// heartbeat serves PUT /job/{id}/heartbeat[?attempt=n] (body ignored). 204.
func (a *API) heartbeat(w http.ResponseWriter, r *http.Request) error {
	id, err := jobID(r)
	if err != nil {
		return err
	}
	attempt, err := attemptParam(query(r))
	if err != nil {
		return err
	}
	if err := a.store.Heartbeat(r.Context(), id, attempt); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// deleteJob serves DELETE /job/{id}, whatever the job's state: 204, or 404
// with an empty body if there is no such job (a bad id keeps its text).
func (a *API) deleteJob(w http.ResponseWriter, r *http.Request) error {
	id, err := jobID(r)
	if err != nil {
		return err
	}
	if err := a.store.DeleteJob(r.Context(), id); err != nil {
		return emptyNotFound(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// retryJob serves POST /job/{id}/retry with an optional {"run_at"} or
// {"delay"}: 200 {"status","retries_attempted"}.
func (a *API) retryJob(w http.ResponseWriter, r *http.Request) error {
	id, err := jobID(r)
	if err != nil {
		return err
	}
	doc, err := wire.ReadOptionalJSON(r, a.opts.MaxBodySize)
	if err != nil {
		return err
	}
	runAt, err := a.decodeRunAt(doc)
	if err != nil {
		return err
	}
	res, err := a.store.RetryJob(r.Context(), id, runAt)
	if err != nil {
		return err
	}
	a.event(r, "job retried", id, slog.String("status", string(res.Status)))
	writeJSON(w, http.StatusOK, wire.AppendRetryResult(nil, res))
	return nil
}

// createJob serves POST /queue/{name}/job: 201 with Location: /job/<id>
// and the new id as the body. A create whose key a pending job holds
// (on_conflict keep or update) answers 200 with that job's id and
// Location. The body is checked before the name.
func (a *API) createJob(w http.ResponseWriter, r *http.Request) error {
	doc, err := a.readJSON(r)
	if err != nil {
		return err
	}
	rules, err := a.checkQuery("create-job", r)
	if err != nil {
		return err
	}
	cb := member(&doc.Root, "callback")
	if cb != nil {
		// An extension field: the body's input is strict.
		if err := rules.usesExtension(); err != nil {
			return err
		}
	}
	spec, err := decodeJobSpec(doc, &doc.Root, &rules, "callback")
	if err != nil {
		return err
	}
	if cb != nil {
		if spec.Callback, err = callbackValue(cb, a.pushPolicy); err != nil {
			return err
		}
	}
	name, err := queueName(r)
	if err != nil {
		return err
	}
	q := query(r)
	wait, waiting, err := waitParam(q)
	if err != nil {
		return err
	}
	fields, err := parseFields(q)
	if err != nil {
		return err
	}
	if fields != nil && !waiting {
		return invalid("fields", "only with wait")
	}
	c, err := a.store.CreateJob(r.Context(), name, spec)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if c.Existing {
		status = http.StatusOK
	} else {
		a.event(r, "job created", c.ID, slog.String("queue", name))
	}
	w.Header()["Location"] = []string{"/job/" + strconv.FormatUint(c.ID, 10)}
	if !c.Existing && madeSecret(&doc.Root, "callback") {
		answerCallbackSecret(w, spec.Callback)
	}
	if waiting {
		return a.createdWait(w, r, c.ID, wait, fields)
	}
	writeJSON(w, status, wire.AppendUint(nil, c.ID))
	return nil
}

// waitResultFields are the fields of POST /queue/{name}/job?wait='s answer
// when the job ended, unless ?fields= names others.
var waitResultFields = []string{"id", "status", "output", "error"}

// createdWait answers a create with ?wait= (run and wait): 200 with the
// job's result fields once it has ended for good within wait, else 202
// with its id.
func (a *API) createdWait(w http.ResponseWriter, r *http.Request, id uint64, wait time.Duration, fields []string) error {
	job, err := a.store.WaitJob(r.Context(), id, wait, a.drain)
	if err != nil {
		return err
	}
	if !job.Ended() {
		writeJSON(w, http.StatusAccepted, wire.AppendUint(nil, id))
		return nil
	}
	if fields == nil {
		fields = waitResultFields
	}
	writeJSON(w, http.StatusOK, wire.AppendJob(make([]byte, 0, 256), job, fields))
	return nil
}

// createJobs serves POST /queue/{name}/jobs: a JSON array of 1 to 1000
// create bodies, all checked before any job is created. 201 with the ids,
// in order.
func (a *API) createJobs(w http.ResponseWriter, r *http.Request) error {
	doc, err := a.readJSON(r)
	if err != nil {
		return err
	}
	specs, err := decodeJobSpecs(doc)
	if err != nil {
		return err
	}
	name, err := queueName(r)
	if err != nil {
		return err
	}
	cs, err := a.store.CreateJobs(r.Context(), name, specs)
	if err != nil {
		return err
	}
	ids := make([]uint64, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
		if !c.Existing {
			a.event(r, "job created", c.ID, slog.String("queue", name))
		}
	}
	writeJSON(w, http.StatusCreated, wire.AppendIDs(nil, ids))
	return nil
}

// event logs a job event at info level: one line per job and event. It
// hands the record to the handler itself: slog.Logger would also look up
// the caller's program counter (runtime.Callers) for every line, which
// only a handler with AddSource reads, and which would name this function.
func (a *API) event(r *http.Request, msg string, id uint64, attrs ...slog.Attr) {
	ctx := r.Context()
	h := a.log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	rec := slog.NewRecord(time.Now(), slog.LevelInfo, msg, 0)
	rec.AddAttrs(slog.Uint64("job_id", id))
	rec.AddAttrs(attrs...)
	_ = h.Handle(ctx, rec)
}
