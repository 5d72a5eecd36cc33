// Package deploygen derives every deployment artefact that merely repeats
// the route table (shared/httpapi.Routes) and the sweep kinds (sweep.Kinds):
// the function resources of template.yaml, functions/<route>/main.go,
// sweeper/<kind>/main.go, the Makefile's function list, and a skeleton
// events/ sample for a route that has none. `make generate` (cmd/gen-deploy)
// writes them; a test fails when the committed files differ.
package deploygen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ocyless/ocyless/shared/httpapi"
	"github.com/ocyless/ocyless/shared/sweep"
)

// longPoll names the routes whose requests may wait (?wait=, up to
// ocypod.MaxWait = 20 s): their functions get LongPollTimeout instead of
// the template's global 10 s, still below API Gateway's 30 s integration
// timeout.
var longPoll = map[string]bool{
	"next-job":    true, // GET /queue/{name}/job?wait=
	"take-jobs":   true, // GET /job?queues=&wait=
	"update-job":  true, // PATCH /job/{id}?take=&wait=
	"update-jobs": true, // PATCH /jobs?take=&wait=
	"get-job":     true, // GET /job/{id}?wait=
	"create-job":  true, // POST /queue/{name}/job?wait=
}

// LongPollTimeout is the Lambda timeout, in seconds, of the long-poll
// routes: the 20 s wait, plus the Redis calls around it, plus a margin.
const LongPollTimeout = 25

// NoRedisURL is the OCYPOD_REDIS_URL of the functions that never touch
// Redis. lambdamain still builds a client at init (it never dials); this
// address keeps the real one, and any password in it, out of them.
const NoRedisURL = "rediss://redis-not-used.invalid:6379"

// shortBudget gives the sweep kinds that are not latency-sensitive a short
// OCYPOD_SWEEP_BUDGET: one pass per tick instead of staying SweepBudget for
// jobs falling due. The others use the SweepBudget parameter.
var shortBudget = map[sweep.Kind]string{
	sweep.Expiry: "5s",
}

// wakesDispatcher names the routes whose functions wake the push
// dispatcher (OCYPOD_PUSH_DISPATCHER) after a create or a retry made a
// push queue's job due, or a queue's settings changed (push set, a queue
// resumed).
// Their role may invoke the dispatcher and nothing else.
var wakesDispatcher = map[string]bool{
	"create-job":  true,
	"create-jobs": true,
	"put-queue":   true,
	"patch-queue": true,
	"retry-job":   true,
}

// The push dispatcher function (package dispatchmain).
const (
	DispatcherID    = "PushDispatcherFunction"
	DispatcherDir   = "dispatcher"
	DispatcherEvent = "events/dispatcher.json"
)

// Function is one Lambda function as every artefact describes it.
type Function struct {
	LogicalID  string         // CreateJobFunction, SweepTimeoutsFunction
	Dir        string         // functions/create-job, sweeper/timeouts
	Event      string         // events/create-job.json, events/sweep-timeouts.json
	Route      *httpapi.Route // nil for a sweeper and the dispatcher
	Allow      string         // a route's 405 Allow header: the methods of its path in the table
	Kind       sweep.Kind     // "" for a route and the dispatcher
	Dispatcher bool           // the push dispatcher
	Wakes      bool           // a route whose function wakes the dispatcher
	NeedsRedis bool
	Budget     string // a sweeper's fixed OCYPOD_SWEEP_BUDGET; "" means the SweepBudget parameter
	Timeout    int    // a route's own Lambda timeout in seconds; 0 means the template's global one
}

// Input is what the artefacts are derived from.
type Input struct {
	Routes []httpapi.Route
	Kinds  []sweep.Kind
	// KindIdents maps a kind to the identifier of its constant in package
	// sweep (timeouts -> Timeouts), for the sweeper mains. A kind without
	// one is written as sweep.Kind("<kind>").
	KindIdents map[sweep.Kind]string
}

// RepoInput is the repository's Input: the route table, the sweep kinds and
// their constants as declared in root/shared/sweep.
func RepoInput(root string) (Input, error) {
	idents, err := kindIdents(filepath.Join(root, "shared", "sweep"))
	if err != nil {
		return Input{}, err
	}
	return Input{Routes: httpapi.Routes(), Kinds: slices.Clone(sweep.Kinds), KindIdents: idents}, nil
}

// kindIdents reads the constants of type Kind declared in dir's non-test
// Go files.
func kindIdents(dir string) (map[sweep.Kind]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	out := map[sweep.Kind]string{}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if typ, ok := vs.Type.(*ast.Ident); !ok || typ.Name != "Kind" || len(vs.Names) != len(vs.Values) {
					continue
				}
				for i, name := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					if v, err := strconv.Unquote(lit.Value); err == nil && name.IsExported() {
						out[sweep.Kind(v)] = name.Name
					}
				}
			}
		}
	}
	return out, nil
}

// SweeperID is the template.yaml name of a sweeper: timeouts ->
// SweepTimeoutsFunction.
func SweeperID(k sweep.Kind) string {
	return "Sweep" + strings.TrimSuffix(httpapi.LogicalID(string(k)), "Function") + "Function"
}

var (
	routeName = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	kindName  = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
)

// Functions derives every function from in: the routes in table order,
// then the sweepers, then the push dispatcher. Names that cannot be a directory, an event file and a
// logical id at once are an error, as are two functions with one id.
func Functions(in Input) ([]Function, error) {
	var out []Function
	seen := map[string]string{}
	add := func(f Function, what string) error {
		if prev, dup := seen[f.LogicalID]; dup {
			return fmt.Errorf("%s and %s both map to %s", prev, what, f.LogicalID)
		}
		seen[f.LogicalID] = what
		out = append(out, f)
		return nil
	}
	for _, r := range in.Routes {
		if !routeName.MatchString(r.Name) {
			return nil, fmt.Errorf("route name %q: want lower-case words joined by '-'", r.Name)
		}
		f := Function{
			LogicalID:  httpapi.LogicalID(r.Name),
			Dir:        "functions/" + r.Name,
			Event:      "events/" + r.Name + ".json",
			Route:      &r,
			Allow:      allow(in.Routes, r.Pattern),
			NeedsRedis: httpapi.NeedsStore(r.Name),
		}
		if longPoll[r.Name] {
			f.Timeout = LongPollTimeout
		}
		f.Wakes = wakesDispatcher[r.Name] && f.NeedsRedis
		if err := add(f, "route "+r.Name); err != nil {
			return nil, err
		}
	}
	for _, k := range in.Kinds {
		if !kindName.MatchString(string(k)) {
			return nil, fmt.Errorf("sweep kind %q: want one lower-case word", k)
		}
		f := Function{
			LogicalID:  SweeperID(k),
			Dir:        "sweeper/" + string(k),
			Event:      "events/sweep-" + string(k) + ".json",
			Kind:       k,
			NeedsRedis: true,
			Budget:     shortBudget[k],
		}
		if err := add(f, "sweep "+string(k)); err != nil {
			return nil, err
		}
	}
	d := Function{LogicalID: DispatcherID, Dir: DispatcherDir, Event: DispatcherEvent, Dispatcher: true, NeedsRedis: true}
	if err := add(d, "the push dispatcher"); err != nil {
		return nil, err
	}
	return out, nil
}

// RouteVar is the identifier of a route's variable in package httpapi,
// which its function's main passes to httpmain.Serve: the route's name in
// CamelCase, then Route (create-job -> CreateJobRoute).
func RouteVar(name string) string {
	return strings.TrimSuffix(httpapi.LogicalID(name), "Function") + "Route"
}

// allow is the Allow header of a 405 on pattern (as httpapi.Allow answers
// for the repository's table): every method routes has for it, in order.
func allow(routes []httpapi.Route, pattern string) string {
	var methods []string
	for _, r := range routes {
		if r.Pattern == pattern && !slices.Contains(methods, r.Method) {
			methods = append(methods, r.Method)
		}
	}
	return strings.Join(methods, ", ")
}

// PathParams returns the wildcard names of a route pattern, in order.
func PathParams(pattern string) []string {
	var out []string
	for _, seg := range strings.Split(pattern, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(seg, "{"), "}"))
		}
	}
	return out
}
