package httpapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/ocyless/ocyless/shared/wire"
)

// Route is one endpoint. Name is also the directory of its Lambda function
// (functions/<Name>) and, through LogicalID, its resource in template.yaml
// and its build target in the Makefile.
type Route struct {
	Name    string
	Method  string
	Pattern string // path with {wildcards}, each one whole segment
	handler handlerFunc
}

// handlerFunc is the shape of every handler: a method expression such as
// (*API).getJob. A handler writes its success response itself and returns
// any failure without writing anything; the router answers a returned error
// with writeError, the only place errors become responses.
type handlerFunc func(a *API, w http.ResponseWriter, r *http.Request) error

// routes is THE route table: the local server mounts all of it, each Lambda
// serves one entry, and tests check template.yaml, functions/, events/ and
// the Makefile against it. Ocypod's 19 routes come first; the order of a
// path's methods is the order of its 405's Allow header.
var routes = []Route{
	{"health", http.MethodGet, "/health", (*API).health},
	{"info", http.MethodGet, "/info", (*API).info},
	{"version", http.MethodGet, "/info/version", (*API).version},
	{"tag-jobs", http.MethodGet, "/tag/{name}", (*API).tagJobs},
	{"job-status", http.MethodGet, "/job/{id}/status", (*API).jobStatus},
	{"get-job-output", http.MethodGet, "/job/{id}/output", (*API).getJobOutput},
	{"set-job-output", http.MethodPut, "/job/{id}/output", (*API).setJobOutput},
	{"heartbeat", http.MethodPut, "/job/{id}/heartbeat", (*API).heartbeat},
	{"get-job", http.MethodGet, "/job/{id}", (*API).getJob},
	{"update-job", http.MethodPatch, "/job/{id}", (*API).updateJob},
	{"delete-job", http.MethodDelete, "/job/{id}", (*API).deleteJob},
	{"queue-job-ids", http.MethodGet, "/queue/{name}/job_ids", (*API).queueJobIDs},
	{"next-job", http.MethodGet, "/queue/{name}/job", (*API).nextJob},
	{"create-job", http.MethodPost, "/queue/{name}/job", (*API).createJob},
	{"queue-size", http.MethodGet, "/queue/{name}/size", (*API).queueSize},
	{"get-queue", http.MethodGet, "/queue/{name}", (*API).getQueue},
	{"put-queue", http.MethodPut, "/queue/{name}", (*API).putQueue},
	{"delete-queue", http.MethodDelete, "/queue/{name}", (*API).deleteQueue},
	{"list-queues", http.MethodGet, "/queue", (*API).listQueues},
	// The extended job model (api-v2).
	{"patch-queue", http.MethodPatch, "/queue/{name}", (*API).patchQueue},
	{"list-queue-jobs", http.MethodGet, "/queue/{name}/jobs", (*API).listQueueJobs},
	{"create-jobs", http.MethodPost, "/queue/{name}/jobs", (*API).createJobs},
	{"queue-stats", http.MethodGet, "/queue/{name}/stats", (*API).queueStats},
	{"list-schedules", http.MethodGet, "/queue/{name}/schedules", (*API).listSchedules},
	{"get-schedule", http.MethodGet, "/queue/{name}/schedules/{id}", (*API).getSchedule},
	{"put-schedule", http.MethodPut, "/queue/{name}/schedules/{id}", (*API).putSchedule},
	{"delete-schedule", http.MethodDelete, "/queue/{name}/schedules/{id}", (*API).deleteSchedule},
	{"take-jobs", http.MethodGet, "/job", (*API).takeJobs},
	{"retry-job", http.MethodPost, "/job/{id}/retry", (*API).retryJob},
	{"list-jobs", http.MethodGet, "/jobs", (*API).listJobs},
	{"failures", http.MethodGet, "/failures", (*API).failures},
	{"failure-jobs", http.MethodGet, "/failures/{group}", (*API).failureJobs},
	{"retry-failures", http.MethodPost, "/failures/{group}/retry", (*API).retryFailures},
	{"workers", http.MethodGet, "/workers", (*API).workers},
	{"worker", http.MethodGet, "/workers/{name}", (*API).worker},
	{"openapi", http.MethodGet, "/openapi.json", (*API).openapi},
	// The operators' page (shared/dashboard), a browser client of the above.
	{"dashboard", http.MethodGet, "/ui", (*API).dashboard},
}

// storeless names the routes whose handler never touches the store: they
// answer constants or an embedded page. Their functions run without Redis
// (no VPC, no cache permission, no connection at init); a test with Redis
// down shows they still answer.
var storeless = map[string]bool{"version": true, "openapi": true, "dashboard": true}

// NeedsStore reports whether the route called name uses the store.
func NeedsStore(name string) bool { return !storeless[name] }

// Routes returns a copy of the route table.
func Routes() []Route { return append([]Route(nil), routes...) }

// LogicalID is the template.yaml resource name of a route's function, e.g.
// "create-job" -> "CreateJobFunction".
func LogicalID(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "-") {
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	b.WriteString("Function")
	return b.String()
}

// table is the route table bound to a, as the wire router takes it.
func (a *API) table() []wire.Route {
	t := make([]wire.Route, len(routes))
	for i, rt := range routes {
		h := rt.handler
		t[i] = wire.Route{Method: rt.Method, Pattern: rt.Pattern,
			Handler: func(w http.ResponseWriter, r *http.Request) error { return h(a, w, r) }}
	}
	return t
}

// Handler returns every route on one router (wire.Router: Ocypod's path
// matching, 404 and 405 answers).
func (a *API) Handler() http.Handler {
	return wire.NewRouter(a.table(), a.writeError)
}

// RouteHandler returns a handler serving only the route called name, for
// a Lambda function behind an API Gateway route of its own (see
// wire.NewRouteRouter). Routes without wildcards always match the path, so
// an adapter must pass the path without any stage prefix.
func (a *API) RouteHandler(name string) (http.Handler, error) {
	for i, rt := range routes {
		if rt.Name == name {
			return wire.NewRouteRouter(a.table(), i, a.writeError), nil
		}
	}
	return nil, fmt.Errorf("httpapi: unknown route %q", name)
}
