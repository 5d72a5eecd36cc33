package httpapi

import (
	"net/http"
	"strings"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/wire"
)

// listQueueJobs serves GET /queue/{name}/jobs: the queue's jobs, filtered
// and paged (listRequest).
func (a *API) listQueueJobs(w http.ResponseWriter, r *http.Request) error {
	name, err := queueName(r)
	if err != nil {
		return err
	}
	return a.list(w, r, name)
}

// listJobs serves GET /jobs: the jobs of every queue, filtered and paged.
func (a *API) listJobs(w http.ResponseWriter, r *http.Request) error {
	return a.list(w, r, "")
}

func (a *API) list(w http.ResponseWriter, r *http.Request, queue string) error {
	q := query(r)
	req, err := listRequest(q, queue)
	if err != nil {
		return err
	}
	if req.Fields, err = parseFields(q); err != nil {
		return err
	}
	page, err := a.store.ListJobs(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.AppendJobPage(make([]byte, 0, 512*len(page.Jobs)+32), page, req.Fields))
	return nil
}

// listRequest reads a listing's filters: status (one status; a list names
// it once), tag, key, worker, tracked, limit (1 to 1000, default 100) and
// cursor.
func listRequest(q wire.Query, queue string) (ocypod.ListRequest, error) {
	req := ocypod.ListRequest{Queue: queue}
	var err error
	if req.Limit, err = intParam(q, "limit", 1, ocypod.MaxListLimit, ocypod.DefaultListLimit); err != nil {
		return req, err
	}
	if s, ok, err := q.Get("status"); err != nil {
		return req, err
	} else if ok {
		if req.Status, err = statusParam(s); err != nil {
			return req, err
		}
	}
	if req.Tag, req.HasTag, err = nameParam(q, "tag", ocypod.MaxNameLength); err != nil {
		return req, err
	}
	if req.Key, _, err = nameParam(q, "key", ocypod.MaxKeyLength); err != nil {
		return req, err
	}
	if req.Worker, _, err = nameParam(q, "worker", ocypod.MaxWorkerName); err != nil {
		return req, err
	}
	if s, ok, err := q.Get("tracked"); err != nil {
		return req, err
	} else if ok {
		switch s {
		case "true", "false":
			t := s == "true"
			req.Tracked = &t
		default:
			return req, invalid("tracked", "must be true or false")
		}
	}
	if req.Cursor, _, err = q.Get("cursor"); err != nil {
		return req, err
	}
	return req, nil
}

// statusParam reads ?status=: one of the eight statuses. A list that
// names one status several times is that status.
func statusParam(s string) (ocypod.Status, error) {
	var names []string
	for _, st := range ocypod.AllStatuses {
		names = append(names, string(st))
	}
	items := wire.List(s)
	if len(items) > 1 {
		return "", invalid("status", "give one status")
	}
	st, ok := ocypod.ParseStatus(items[0])
	if !ok {
		return "", invalid("status", "must be one of "+strings.Join(names, ", "))
	}
	return st, nil
}
