package httpapi

import (
	"fmt"
	"net/http"
	"slices"
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

// The routes, one variable each. routes lists them all; a Lambda
// function's main (functions/<name>/main.go, written by make generate)
// names its own, so that its bootstrap links that route's handler and no
// other (a variable nothing reachable refers to is left out of a binary).
// The variable of route "create-job" is CreateJobRoute: the route's name in
// CamelCase, then Route.
var (
	HealthRoute       = Route{"health", http.MethodGet, "/health", (*API).health}
	InfoRoute         = Route{"info", http.MethodGet, "/info", (*API).info}
	VersionRoute      = Route{"version", http.MethodGet, "/info/version", (*API).version}
	TagJobsRoute      = Route{"tag-jobs", http.MethodGet, "/tag/{name}", (*API).tagJobs}
	JobStatusRoute    = Route{"job-status", http.MethodGet, "/job/{id}/status", (*API).jobStatus}
	GetJobOutputRoute = Route{"get-job-output", http.MethodGet, "/job/{id}/output", (*API).getJobOutput}
	SetJobOutputRoute = Route{"set-job-output", http.MethodPut, "/job/{id}/output", (*API).setJobOutput}
	HeartbeatRoute    = Route{"heartbeat", http.MethodPut, "/job/{id}/heartbeat", (*API).heartbeat}
	GetJobRoute       = Route{"get-job", http.MethodGet, "/job/{id}", (*API).getJob}
	UpdateJobRoute    = Route{"update-job", http.MethodPatch, "/job/{id}", (*API).updateJob}
	DeleteJobRoute    = Route{"delete-job", http.MethodDelete, "/job/{id}", (*API).deleteJob}
	QueueJobIdsRoute  = Route{"queue-job-ids", http.MethodGet, "/queue/{name}/job_ids", (*API).queueJobIDs}
	NextJobRoute      = Route{"next-job", http.MethodGet, "/queue/{name}/job", (*API).nextJob}
	CreateJobRoute    = Route{"create-job", http.MethodPost, "/queue/{name}/job", (*API).createJob}
	QueueSizeRoute    = Route{"queue-size", http.MethodGet, "/queue/{name}/size", (*API).queueSize}
	GetQueueRoute     = Route{"get-queue", http.MethodGet, "/queue/{name}", (*API).getQueue}
	PutQueueRoute     = Route{"put-queue", http.MethodPut, "/queue/{name}", (*API).putQueue}
	DeleteQueueRoute  = Route{"delete-queue", http.MethodDelete, "/queue/{name}", (*API).deleteQueue}
	ListQueuesRoute   = Route{"list-queues", http.MethodGet, "/queue", (*API).listQueues}
	// The extended job model (api-v2).
	PatchQueueRoute     = Route{"patch-queue", http.MethodPatch, "/queue/{name}", (*API).patchQueue}
	ListQueueJobsRoute  = Route{"list-queue-jobs", http.MethodGet, "/queue/{name}/jobs", (*API).listQueueJobs}
	CreateJobsRoute     = Route{"create-jobs", http.MethodPost, "/queue/{name}/jobs", (*API).createJobs}
	QueueStatsRoute     = Route{"queue-stats", http.MethodGet, "/queue/{name}/stats", (*API).queueStats}
	ListSchedulesRoute  = Route{"list-schedules", http.MethodGet, "/queue/{name}/schedules", (*API).listSchedules}
	GetScheduleRoute    = Route{"get-schedule", http.MethodGet, "/queue/{name}/schedules/{id}", (*API).getSchedule}
	PutScheduleRoute    = Route{"put-schedule", http.MethodPut, "/queue/{name}/schedules/{id}", (*API).putSchedule}
	DeleteScheduleRoute = Route{"delete-schedule", http.MethodDelete, "/queue/{name}/schedules/{id}", (*API).deleteSchedule}
	TakeJobsRoute       = Route{"take-jobs", http.MethodGet, "/job", (*API).takeJobs}
	RetryJobRoute       = Route{"retry-job", http.MethodPost, "/job/{id}/retry", (*API).retryJob}
	ListJobsRoute       = Route{"list-jobs", http.MethodGet, "/jobs", (*API).listJobs}
	UpdateJobsRoute     = Route{"update-jobs", http.MethodPatch, "/jobs", (*API).updateJobs}
	HeartbeatJobsRoute  = Route{"heartbeat-jobs", http.MethodPost, "/jobs/heartbeat", (*API).heartbeatJobs}
	FailuresRoute       = Route{"failures", http.MethodGet, "/failures", (*API).failures}
	FailureJobsRoute    = Route{"failure-jobs", http.MethodGet, "/failures/{group}", (*API).failureJobs}
	RetryFailuresRoute  = Route{"retry-failures", http.MethodPost, "/failures/{group}/retry", (*API).retryFailures}
	WorkersRoute        = Route{"workers", http.MethodGet, "/workers", (*API).workers}
	WorkerRoute         = Route{"worker", http.MethodGet, "/workers/{name}", (*API).worker}
	OpenapiRoute        = Route{"openapi", http.MethodGet, "/openapi.json", (*API).openapi}
	// The operators' page (shared/dashboard), a browser client of the above.
	DashboardRoute = Route{"dashboard", http.MethodGet, "/ui", (*API).dashboard}
)

// routes is THE route table: the local server mounts all of it, each Lambda
// serves one entry, and tests check template.yaml, functions/, events/ and
// the Makefile against it. Ocypod's 19 routes come first; the order of a
// path's methods is the order of its 405's Allow header. It holds pointers
// so that it is static data: built at init, it would link every handler
// into every binary that imports the package.
var routes = []*Route{
	&HealthRoute, &InfoRoute, &VersionRoute, &TagJobsRoute, &JobStatusRoute,
	&GetJobOutputRoute, &SetJobOutputRoute, &HeartbeatRoute, &GetJobRoute,
	&UpdateJobRoute, &DeleteJobRoute, &QueueJobIdsRoute, &NextJobRoute, &CreateJobRoute,
	&QueueSizeRoute, &GetQueueRoute, &PutQueueRoute, &DeleteQueueRoute, &ListQueuesRoute,
	// The extended job model (api-v2), then the operators' page.
	&PatchQueueRoute, &ListQueueJobsRoute, &CreateJobsRoute, &QueueStatsRoute,
	&ListSchedulesRoute, &GetScheduleRoute, &PutScheduleRoute, &DeleteScheduleRoute,
	&TakeJobsRoute, &RetryJobRoute, &ListJobsRoute, &UpdateJobsRoute, &HeartbeatJobsRoute,
	&FailuresRoute, &FailureJobsRoute, &RetryFailuresRoute, &WorkersRoute, &WorkerRoute,
	&OpenapiRoute, &DashboardRoute,
}

// storeless names the routes whose handler never touches the store: they
// answer constants or an embedded page. Their functions run without Redis
// (no VPC, no cache permission, no connection at init); a test with Redis
// down shows they still answer.
var storeless = map[string]bool{"version": true, "openapi": true, "dashboard": true}

// NeedsStore reports whether the route called name uses the store.
func NeedsStore(name string) bool { return !storeless[name] }

// Routes returns a copy of the route table.
func Routes() []Route {
	out := make([]Route, len(routes))
	for i, rt := range routes {
		out[i] = *rt
	}
	return out
}

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

// bind is rt bound to a, as the wire router takes it: the query check of
// strict input, then the handler.
func (a *API) bind(rt Route) wire.Route {
	h, name := rt.handler, rt.Name
	return wire.Route{Method: rt.Method, Pattern: rt.Pattern,
		Handler: func(w http.ResponseWriter, r *http.Request) error {
			if _, err := a.checkQuery(name, r); err != nil {
				return err
			}
			return h(a, w, r)
		}}
}

// table is the route table bound to a.
func (a *API) table() []wire.Route {
	t := make([]wire.Route, len(routes))
	for i, rt := range routes {
		t[i] = a.bind(*rt)
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
// an adapter must pass the path without any stage prefix. It is
// SingleHandler of that route and its Allow.
func (a *API) RouteHandler(name string) (http.Handler, error) {
	for _, rt := range routes {
		if rt.Name == name {
			return a.SingleHandler(*rt, Allow(rt.Pattern))
		}
	}
	return nil, fmt.Errorf("httpapi: unknown route %q", name)
}

// SingleHandler is RouteHandler without the route table: it serves rt (one
// of the route variables, such as CreateJobRoute) alone, and a 405 on its
// path answers Allow: allow, which must be Allow(rt.Pattern). A Lambda
// function's generated main passes both as constants, so its bootstrap
// links rt's handler and no other route's. A Route that is not one of the
// variables (it has no handler) is an error.
func (a *API) SingleHandler(rt Route, allow string) (http.Handler, error) {
	if rt.handler == nil {
		return nil, fmt.Errorf("httpapi: unknown route %q", rt.Name)
	}
	return wire.NewSingleRouter(a.bind(rt), allow, a.writeError), nil
}

// Allow is the Allow header of a 405 on pattern: every method the route
// table has for it, in table order.
func Allow(pattern string) string {
	var methods []string
	for _, rt := range routes {
		if rt.Pattern == pattern && !slices.Contains(methods, rt.Method) {
			methods = append(methods, rt.Method)
		}
	}
	return strings.Join(methods, ", ")
}
