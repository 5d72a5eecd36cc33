package httpapi

import (
	"net/http"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/wire"
)

// failures serves GET /failures: {"<group>": count} of the jobs failed
// for good, groups with jobs only.
func (a *API) failures(w http.ResponseWriter, r *http.Request) error {
	counts, err := a.store.Failures(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.AppendCounts(nil, counts))
	return nil
}

// failureGroup returns the {group} path value. Any group may be asked
// for: an unknown one is empty.
func failureGroup(r *http.Request) string {
	return wire.ValidText(r.PathValue("group"))
}

// failureJobs serves GET /failures/{group}[?limit&cursor&fields]:
// {"total","jobs","next_cursor"}, each job with its error.
func (a *API) failureJobs(w http.ResponseWriter, r *http.Request) error {
	group := failureGroup(r)
	q := query(r)
	limit, err := intParam(q, "limit", 1, ocypod.MaxListLimit, ocypod.DefaultListLimit)
	if err != nil {
		return err
	}
	cursor, _, err := q.Get("cursor")
	if err != nil {
		return err
	}
	fields, err := parseFields(q)
	if err != nil {
		return err
	}
	page, err := a.store.FailureJobs(r.Context(), group, limit, cursor)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.AppendFailurePage(make([]byte, 0, 512*len(page.Jobs)+48), page, fields))
	return nil
}

// retryFailures serves POST /failures/{group}/retry[?limit=n] with an
// optional {"queue"}: requeues up to n (default 100, at most 1000) jobs
// of the group, into that queue if given. 200 {"retried": k}.
func (a *API) retryFailures(w http.ResponseWriter, r *http.Request) error {
	group := failureGroup(r)
	limit, err := intParam(query(r), "limit", 1, ocypod.MaxListLimit, ocypod.DefaultListLimit)
	if err != nil {
		return err
	}
	doc, err := wire.ReadOptionalJSON(r, a.opts.MaxBodySize)
	if err != nil {
		return err
	}
	queue, err := decodeRetryQueue(doc)
	if err != nil {
		return err
	}
	n, err := a.store.RetryFailures(r.Context(), group, limit, queue)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.AppendRetried(nil, n))
	return nil
}
