package httpapi

import (
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
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
func (a *API) listQueues() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		names, err := a.store.ListQueues(r.Context())
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		names = slices.Clone(names)
		slices.Sort(names)
		writeJSON(w, http.StatusOK, appendStrings(nil, names))
	}
}

// getQueue serves GET /queue/{name}: the queue's settings.
func (a *API) getQueue() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name, err := queueName(r)
		if err == nil {
			var s ocypod.QueueSettings
			if s, err = a.store.GetQueue(r.Context(), name); err == nil {
				writeJSON(w, http.StatusOK, appendQueueSettings(nil, s))
				return
			}
		}
		a.writeError(w, r, err)
	}
}

// putQueue serves PUT /queue/{name}: creates the queue (201) or replaces all
// its settings (204), missing fields taking the defaults. Both answers carry
// Location: /queue/<name> and no body.
func (a *API) putQueue() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		doc, err := a.readJSON(r)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		s, err := decodeQueueSettings(doc)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		name, err := queueName(r)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		created, err := a.store.PutQueue(r.Context(), name, s)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		w.Header().Set("Location", "/queue/"+name)
		if created {
			w.WriteHeader(http.StatusCreated)
		} else {
			w.WriteHeader(http.StatusNoContent)
		}
	}
}

// deleteQueue serves DELETE /queue/{name}: deletes the queue and its queued
// jobs. 204, or 404 with an empty body if there is no such queue.
func (a *API) deleteQueue() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name, err := queueName(r)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		if err := a.store.DeleteQueue(r.Context(), name); err != nil {
			a.writeErrorEmptyNotFound(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

// queueSize serves GET /queue/{name}/size: the number of queued jobs.
func (a *API) queueSize() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name, err := queueName(r)
		if err == nil {
			var n uint64
			if n, err = a.store.QueueSize(r.Context(), name); err == nil {
				writeJSON(w, http.StatusOK, appendUint(nil, n))
				return
			}
		}
		a.writeError(w, r, err)
	}
}

// queueJobIDs serves GET /queue/{name}/job_ids: the queue's job ids grouped
// by status, all six statuses always present.
func (a *API) queueJobIDs() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name, err := queueName(r)
		if err == nil {
			var ids ocypod.JobIDs
			if ids, err = a.store.QueueJobIDs(r.Context(), name); err == nil {
				writeJSON(w, http.StatusOK, appendJobIDs(nil, ids))
				return
			}
		}
		a.writeError(w, r, err)
	}
}

// nextJob serves GET /queue/{name}/job: takes the oldest queued job, now
// running, as {"id":..,"input":..}. An empty queue answers 204, after
// Options.NextJobDelay (cut short if the client goes away).
func (a *API) nextJob() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name, err := queueName(r)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		job, err := a.store.NextJob(r.Context(), name)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		if job == nil {
			a.pause(r)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		a.log.LogAttrs(r.Context(), slog.LevelInfo, "job started",
			slog.Uint64("job_id", job.ID), slog.String("queue", name))
		b := append([]byte(`{"id":`), strconv.FormatUint(job.ID, 10)...)
		b = append(b, `,"input":`...)
		b = appendRaw(b, job.Input)
		writeJSON(w, http.StatusOK, append(b, '}'))
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
	}
}

// createJob serves POST /queue/{name}/job: 201 with Location: /job/<id> and
// the new id as the body.
func (a *API) createJob() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		doc, err := a.readJSON(r)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		spec, err := decodeJobSpec(doc)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		name, err := queueName(r)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		id, err := a.store.CreateJob(r.Context(), name, spec)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		a.log.LogAttrs(r.Context(), slog.LevelInfo, "job created",
			slog.Uint64("job_id", id), slog.String("queue", name))
		w.Header().Set("Location", "/job/"+strconv.FormatUint(id, 10))
		writeJSON(w, http.StatusCreated, appendUint(nil, id))
	}
}
