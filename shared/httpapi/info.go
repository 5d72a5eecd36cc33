package httpapi

import (
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"
)

// health serves GET /health: 200 {"status":"healthy"} when Redis answers a
// PING, else 503 {"status":"unhealthy","error":"<message>"} (the message
// carries no secrets and no internal error text).
func (a *API) health() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		err := a.store.Ping(r.Context())
		if err == nil {
			writeJSON(w, http.StatusOK, []byte(`{"status":"healthy"}`))
			return
		}
		_, msg := statusOf(err)
		a.logFailure(r, http.StatusServiceUnavailable, err)
		b := append([]byte(`{"status":"unhealthy","error":`), appendString(nil, msg)...)
		writeJSON(w, http.StatusServiceUnavailable, append(b, '}'))
	}
}

// info serves GET /info: job counts per queue and the global statistics.
func (a *API) info() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		info, err := a.store.Info(r.Context())
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, appendInfo(nil, info))
	}
}

// version serves GET /info/version: the Ocypod API version as a JSON
// string. It does not touch Redis.
func (a *API) version() http.HandlerFunc {
	body := appendString(nil, Version)
	return func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, body)
	}
}

// tagJobs serves GET /tag/{name}: the ids of the jobs carrying the tag,
// ascending; [] for an unknown tag. Any non-empty tag may be asked for.
func (a *API) tagJobs() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tag := r.PathValue("name")
		if !utf8.ValidString(tag) {
			tag = strings.ToValidUTF8(tag, "\uFFFD")
		}
		ids, err := a.store.TagJobIDs(r.Context(), tag)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		ids = slices.Clone(ids)
		slices.Sort(ids)
		writeJSON(w, http.StatusOK, appendIDs(nil, ids))
	}
}
