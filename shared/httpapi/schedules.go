package httpapi

import (
	"net/http"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/wire"
)

// scheduleID returns the {id} path value of a schedule route: 1 to
// ocypod.MaxScheduleID characters of [A-Za-z0-9_.-], like a queue name.
func scheduleID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if len(id) > ocypod.MaxScheduleID || !ocypod.ValidQueueName(id) {
		return "", invalid("schedule id", "must be 1 to 64 characters of a-zA-Z0-9_.-")
	}
	return id, nil
}

// scheduleTarget returns the queue and schedule id of a schedule route.
func scheduleTarget(r *http.Request) (string, string, error) {
	name, err := queueName(r)
	if err != nil {
		return "", "", err
	}
	id, err := scheduleID(r)
	return name, id, err
}

// putSchedule serves PUT /queue/{name}/schedules/{id}: {"cron": "<5-field
// cron, UTC>"} or {"every": <duration>}, and "job", a create body. 201
// when it creates the schedule, 204 when it replaces one; Location either
// way. The body is checked before the names.
func (a *API) putSchedule(w http.ResponseWriter, r *http.Request) error {
	doc, err := a.readJSON(r)
	if err != nil {
		return err
	}
	name, id, err := scheduleTarget(r)
	if err != nil {
		return err
	}
	s, err := decodeSchedule(doc, name, id)
	if err != nil {
		return err
	}
	created, err := a.store.PutSchedule(r.Context(), s)
	if err != nil {
		return err
	}
	w.Header()["Location"] = []string{"/queue/" + name + "/schedules/" + id}
	if created {
		w.WriteHeader(http.StatusCreated)
	} else {
		w.WriteHeader(http.StatusNoContent)
	}
	return nil
}

// getSchedule serves GET /queue/{name}/schedules/{id}.
func (a *API) getSchedule(w http.ResponseWriter, r *http.Request) error {
	name, id, err := scheduleTarget(r)
	if err != nil {
		return err
	}
	s, err := a.store.GetSchedule(r.Context(), name, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.AppendSchedule(nil, &s))
	return nil
}

// deleteSchedule serves DELETE /queue/{name}/schedules/{id}: 204, 404 for
// a schedule that does not exist.
func (a *API) deleteSchedule(w http.ResponseWriter, r *http.Request) error {
	name, id, err := scheduleTarget(r)
	if err != nil {
		return err
	}
	if err := a.store.DeleteSchedule(r.Context(), name, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listSchedules serves GET /queue/{name}/schedules: the queue's schedules
// by id ([] when none).
func (a *API) listSchedules(w http.ResponseWriter, r *http.Request) error {
	name, err := queueName(r)
	if err != nil {
		return err
	}
	ss, err := a.store.ListSchedules(r.Context(), name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.AppendSchedules(nil, ss))
	return nil
}
