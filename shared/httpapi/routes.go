package httpapi

import (
	"net/http"
	"strings"
)

// Route is one Ocypod endpoint. Name is also the directory of its Lambda
// function (functions/<Name>) and, through LogicalID, its resource in
// template.yaml and its build target in the Makefile.
type Route struct {
	Name    string
	Method  string
	Pattern string // path with {id} / {name} wildcards, each one whole segment
	handler handlerFunc
}

// handlerFunc is the shape of every handler: a method expression such as
// (*API).getJob. A handler writes its success response itself and returns
// any failure without writing anything; the router answers a returned error
// with writeError, the only place errors become responses.
type handlerFunc func(a *API, w http.ResponseWriter, r *http.Request) error

// routes is THE route table: the local server mounts all of it, each Lambda
// serves one entry, and tests check template.yaml, functions/, events/ and the
// Makefile against it. Order matters only for documentation.
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
}

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
