package httpapi

import "net/http"

// TEMPORARY: placeholders until the handlers land.
func notYet(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotImplemented) }

func (a *API) health() http.HandlerFunc       { return notYet }
func (a *API) info() http.HandlerFunc         { return notYet }
func (a *API) version() http.HandlerFunc      { return notYet }
func (a *API) tagJobs() http.HandlerFunc      { return notYet }
func (a *API) jobStatus() http.HandlerFunc    { return notYet }
func (a *API) getJobOutput() http.HandlerFunc { return notYet }
func (a *API) setJobOutput() http.HandlerFunc { return notYet }
func (a *API) heartbeat() http.HandlerFunc    { return notYet }
func (a *API) getJob() http.HandlerFunc       { return notYet }
func (a *API) updateJob() http.HandlerFunc    { return notYet }
func (a *API) deleteJob() http.HandlerFunc    { return notYet }
func (a *API) queueJobIDs() http.HandlerFunc  { return notYet }
func (a *API) nextJob() http.HandlerFunc      { return notYet }
func (a *API) createJob() http.HandlerFunc    { return notYet }
func (a *API) queueSize() http.HandlerFunc    { return notYet }
func (a *API) getQueue() http.HandlerFunc     { return notYet }
func (a *API) putQueue() http.HandlerFunc     { return notYet }
func (a *API) deleteQueue() http.HandlerFunc  { return notYet }
func (a *API) listQueues() http.HandlerFunc   { return notYet }

// Handler returns every route on one router (404 for unknown paths, 405 with
// Allow for known paths with another method). TEMPORARY stub.
func (a *API) Handler() http.Handler { return http.HandlerFunc(notYet) }

// RouteHandler returns the handler of one route, for a Lambda function that
// serves only that route. TEMPORARY stub.
func (a *API) RouteHandler(name string) (http.Handler, error) { return http.HandlerFunc(notYet), nil }
