package httpapi

import (
	"context"
	"net/http"
	"slices"

	"github.com/ocyless/ocyless/shared/ocypod"
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
	b, err := appendSealedViews(wire.AppendQueueSettings(nil, s), s)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, b)
	return nil
}

// putQueue serves PUT /queue/{name}: creates the queue (201) or replaces all
// its settings (204): Ocypod's five and the extension's, a setting the body
// does not name taking its default (shards excepted: a placement, it stays
// unless named). Both answers carry Location: /queue/<name> and no body.
// The body is checked before the name.
func (a *API) putQueue(w http.ResponseWriter, r *http.Request) error {
	doc, err := a.readJSON(r)
	if err != nil {
		return err
	}
	rules, err := a.checkQuery("put-queue", r)
	if err != nil {
		return err
	}
	if hasAny(&doc.Root, queuePatchFields[len(queueSettingsFields):]) {
		if err := rules.usesExtension(); err != nil {
			return err
		}
	}
	s, err := decodeQueueSettings(doc, &rules)
	if err != nil {
		return err
	}
	name, err := queueName(r)
	if err != nil {
		return err
	}
	full, ext, err := decodeQueueReplacement(doc, name, s, a.pushPolicy)
	if err != nil {
		return err
	}
	created, err := a.replaceQueue(r, name, s, full, ext)
	if err != nil {
		return err
	}
	answerMadeSecrets(w, &doc.Root, &full)
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
	p, err := decodeQueuePatch(doc, name, a.pushPolicy)
	if err != nil {
		return err
	}
	if err := a.store.PatchQueue(r.Context(), name, p); err != nil {
		return err
	}
	answerMadeSecrets(w, &doc.Root, &p)
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

// replaceQueue gives queue name exactly the settings of a PUT: full is all
// of them, ext the extension's that the body named (nil if none). Ocypod's
// five are written first, by the script that creates a queue; then the
// extension's replace the queue's (a new queue needs that only for those
// the body named). A dead_letter_queue that does not exist is refused
// before anything is written; a new queue whose extension settings are
// refused all the same is removed again, so a refused PUT leaves no queue
// behind.
func (a *API) replaceQueue(r *http.Request, name string, s ocypod.QueueSettings, full ocypod.QueuePatch, ext *ocypod.QueuePatch) (created bool, err error) {
	ctx := r.Context()
	if ext != nil && ext.DeadLetterQueue != nil && *ext.DeadLetterQueue != "" {
		if _, err := a.store.GetQueue(ctx, *ext.DeadLetterQueue); err != nil {
			return false, err
		}
	}
	if created, err = a.store.PutQueue(ctx, name, s); err != nil {
		return false, err
	}
	patch := &full
	if created {
		patch = ext
	}
	if patch == nil {
		return created, nil
	}
	if err := a.store.PatchQueue(ctx, name, *patch); err != nil {
		if status, _ := statusOf(err); created && status >= 400 && status < 500 {
			_ = a.store.DeleteQueue(context.WithoutCancel(ctx), name)
		}
		return false, err
	}
	return created, nil
}
