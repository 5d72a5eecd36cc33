package httpapi

import (
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/wire"
)

// queueName returns the {name} path value if it is a valid queue name. It is
// checked before Redis is touched (upstream checked it after acquiring a
// connection, so a bad name gave 503 while Redis was down).
func queueName(r *http.Request) (string, error) {
	name := r.PathValue("name")
	if !ocypod.ValidQueueName(name) {
		return "", ocypod.InvalidQueueName()
	}
	return name, nil
}

// listQueues serves GET /queue: every queue name, sorted by byte order.
func (a *API) listQueues(w http.ResponseWriter, r *http.Request) error {
	names, err := a.store.ListQueues(r.Context())
	if err != nil {
		return err
	}
	names = slices.Clone(names)
	slices.Sort(names)
	writeJSON(w, http.StatusOK, wire.AppendStrings(nil, names))
	return nil
}

// getQueue serves GET /queue/{name}: the queue's settings.
func (a *API) getQueue(w http.ResponseWriter, r *http.Request) error {
	name, err := queueName(r)
	if err != nil {
		return err
	}
	s, err := a.store.GetQueue(r.Context(), name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.AppendQueueSettings(nil, s))
	return nil
}

// putQueue serves PUT /queue/{name}: creates the queue (201) or replaces all
// its settings (204), missing fields taking the defaults. Both answers carry
// Location: /queue/<name> and no body. The body is checked before the name.
func (a *API) putQueue(w http.ResponseWriter, r *http.Request) error {
	doc, err := a.readJSON(r)
	if err != nil {
		return err
	}
	s, err := decodeQueueSettings(doc)
	if err != nil {
		return err
	}
	name, err := queueName(r)
	if err != nil {
		return err
	}
	created, err := a.store.PutQueue(r.Context(), name, s)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/queue/"+name)
	if created {
		w.WriteHeader(http.StatusCreated)
	} else {
		w.WriteHeader(http.StatusNoContent)
	}
	return nil
}

// deleteQueue serves DELETE /queue/{name}: deletes the queue and its queued
// jobs. 204, or 404 with an empty body if there is no such queue.
func (a *API) deleteQueue(w http.ResponseWriter, r *http.Request) error {
	name, err := queueName(r)
	if err != nil {
		return err
	}
	if err := a.store.DeleteQueue(r.Context(), name); err != nil {
		return emptyNotFound(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// queueSize serves GET /queue/{name}/size: the number of queued jobs.
func (a *API) queueSize(w http.ResponseWriter, r *http.Request) error {
	name, err := queueName(r)
	if err != nil {
		return err
	}
	n, err := a.store.QueueSize(r.Context(), name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.AppendUint(nil, n))
	return nil
}

// queueJobIDs serves GET /queue/{name}/job_ids: the queue's job ids grouped
// by status, all six statuses always present.
func (a *API) queueJobIDs(w http.ResponseWriter, r *http.Request) error {
	name, err := queueName(r)
	if err != nil {
		return err
	}
	ids, err := a.store.QueueJobIDs(r.Context(), name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.AppendJobIDs(nil, ids))
	return nil
}

// nextJob serves GET /queue/{name}/job: takes the oldest queued job, now
// running, as {"id":..,"input":..}. An empty queue answers 204, after
// Options.NextJobDelay (cut short if the client goes away).
func (a *API) nextJob(w http.ResponseWriter, r *http.Request) error {
	name, err := queueName(r)
	if err != nil {
		return err
	}
	jobs, err := a.store.Take(r.Context(), ocypod.TakeRequest{Queues: []string{name}, Count: 1})
	if err != nil {
		return err
	}
	if len(jobs) == 0 {
		a.pause(r)
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	job := jobs[0]
	a.log.LogAttrs(r.Context(), slog.LevelInfo, "job started",
		slog.Uint64("job_id", job.ID), slog.String("queue", name))
	b := append([]byte(`{"id":`), strconv.FormatUint(job.ID, 10)...)
	b = append(b, `,"input":`...)
	b = wire.AppendRaw(b, job.Input)
	writeJSON(w, http.StatusOK, append(b, '}'))
	return nil
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
	}
}

// createJob serves POST /queue/{name}/job: 201 with Location: /job/<id> and
// the new id as the body. The body is checked before the name.
func (a *API) createJob(w http.ResponseWriter, r *http.Request) error {
	doc, err := a.readJSON(r)
	if err != nil {
		return err
	}
	spec, err := decodeJobSpec(doc)
	if err != nil {
		return err
	}
	name, err := queueName(r)
	if err != nil {
		return err
	}
	c, err := a.store.CreateJob(r.Context(), name, spec)
	if err != nil {
		return err
	}
	id := c.ID
	a.log.LogAttrs(r.Context(), slog.LevelInfo, "job created",
		slog.Uint64("job_id", id), slog.String("queue", name))
	w.Header().Set("Location", "/job/"+strconv.FormatUint(id, 10))
	writeJSON(w, http.StatusCreated, wire.AppendUint(nil, id))
	return nil
}
