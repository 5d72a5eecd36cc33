package httpapi

import (
	"net/http"
	"slices"

	"github.com/ocyless/ocyless/shared/wire"
)

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

// getQueue serves GET /queue/{name}: the queue's settings, the extension
// settings only when they differ from their defaults.
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

// patchQueue serves PATCH /queue/{name}: merges the given settings into
// the queue's (PUT keeps Ocypod's reset to the defaults). 204, 404 for a
// queue that does not exist. The body is checked before the name.
func (a *API) patchQueue(w http.ResponseWriter, r *http.Request) error {
	doc, err := a.readJSON(r)
	if err != nil {
		return err
	}
	name, err := queueName(r)
	if err != nil {
		return err
	}
	p, err := decodeQueuePatch(doc, name)
	if err != nil {
		return err
	}
	if err := a.store.PatchQueue(r.Context(), name, p); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
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
// by status, Ocypod's six always present, scheduled and waiting when not
// empty.
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
