package httpapi

import (
	"context"
	"net/http"
)

// UpgradingMessage is the 503's text of a request that Gate holds back
// while the namespace's layout upgrade is unfinished.
const UpgradingMessage = "The store's data is being upgraded to this version's layout: try again once the upgrade finishes"

// Gate serves next once ready reports true (the store's namespace has
// this version's layout), asking ready at each request until it does.
// While it reports false (an upgrade is unfinished) requests get a 503
// with UpgradingMessage and never reach next; an error of ready (Redis
// cannot be reached: a 503) is answered as a handler's error is, and the
// request does not reach next either.
func (a *API) Gate(next http.Handler, ready func(context.Context) (bool, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok, err := ready(r.Context())
		switch {
		case err != nil:
			// Not known to be servable: the request could reach a
			// namespace mid-upgrade (its own node may answer while the
			// check's reads of every node fail), so it waits too.
			a.writeError(w, r, err)
			return
		case !ok:
			writeText(w, http.StatusServiceUnavailable, UpgradingMessage)
			return
		}
		next.ServeHTTP(w, r)
	})
}
