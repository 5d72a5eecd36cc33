package deploygen_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"gopkg.in/yaml.v3"

	"github.com/ocyless/ocyless/internal/deploygen"
	"github.com/ocyless/ocyless/shared/httpapi"
	"github.com/ocyless/ocyless/shared/lambdahttp"
	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/sweep"
)

// repoRoot is the repository root, relative to this package.
const repoRoot = "../.."

// grown is the repository's input plus routes and sweep kinds of the kind
// the extension contract adds, with no constant for the new kinds.
func grown(t *testing.T) deploygen.Input {
	t.Helper()
	in, err := deploygen.RepoInput(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	in.Routes = append(in.Routes,
		httpapi.Route{Name: "growth-list", Method: http.MethodGet, Pattern: "/growth"},
		httpapi.Route{Name: "growth-create", Method: http.MethodPost, Pattern: "/growth/{name}/items"},
		httpapi.Route{Name: "growth-patch", Method: http.MethodPatch, Pattern: "/growth/{name}"},
		httpapi.Route{Name: "growth-group", Method: http.MethodGet, Pattern: "/growth-groups/{group}"},
		httpapi.Route{Name: "growth-put", Method: http.MethodPut, Pattern: "/growth/{name}/plans/{id}"},
	)
	in.Kinds = append(in.Kinds, "vacuum", "audit")
	return in
}

// TestLongPollTimeouts: the routes whose requests wait up to ocypod.MaxWait
// get a Lambda timeout above it and below API Gateway's 30 s; the others
// keep the template's global one.
func TestLongPollTimeouts(t *testing.T) {
	t.Parallel()
	in, err := deploygen.RepoInput(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := deploygen.Functions(in)
	if err != nil {
		t.Fatal(err)
	}
	var long []string
	for _, f := range fs {
		if f.Timeout == 0 {
			continue
		}
		long = append(long, f.Route.Name)
		if secs := time.Duration(f.Timeout) * time.Second; secs <= ocypod.MaxWait || secs >= 30*time.Second {
			t.Errorf("%s: timeout %ds, want above %v and below 30s", f.LogicalID, f.Timeout, ocypod.MaxWait)
		}
	}
	if want := []string{"get-job", "update-job", "next-job", "create-job", "take-jobs", "update-jobs"}; !slices.Equal(long, want) {
		t.Errorf("long-poll functions %q, want %q", long, want)
	}
}

// tempRepo is a directory holding the repository's template.yaml, as
// Generate needs it.
func tempRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	tmpl, err := os.ReadFile(filepath.Join(repoRoot, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "template.yaml"), tmpl, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestFunctions(t *testing.T) {
	t.Parallel()
	in := deploygen.Input{
		Routes: []httpapi.Route{{Name: "create-job", Method: "POST", Pattern: "/queue/{name}/job"}, {Name: "version", Method: "GET", Pattern: "/info/version"}},
		Kinds:  []sweep.Kind{"timeouts", "expiry"},
	}
	fs, err := deploygen.Functions(in)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, strings.Join([]string{f.LogicalID, f.Dir, f.Event, f.Budget}, " "))
		if f.NeedsRedis == (f.LogicalID == "VersionFunction") {
			t.Errorf("%s: NeedsRedis = %v", f.LogicalID, f.NeedsRedis)
		}
		if f.Wakes != (f.LogicalID == "CreateJobFunction") || f.Dispatcher != (f.LogicalID == deploygen.DispatcherID) {
			t.Errorf("%s: Wakes = %v, Dispatcher = %v", f.LogicalID, f.Wakes, f.Dispatcher)
		}
	}
	want := []string{
		"CreateJobFunction functions/create-job events/create-job.json ",
		"VersionFunction functions/version events/version.json ",
		"SweepTimeoutsFunction sweeper/timeouts events/sweep-timeouts.json ",
		"SweepExpiryFunction sweeper/expiry events/sweep-expiry.json 5s",
		"PushDispatcherFunction dispatcher events/dispatcher.json ",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Functions = %q,\nwant %q", got, want)
	}
	for name, bad := range map[string]deploygen.Input{
		"upper case":     {Routes: []httpapi.Route{{Name: "Create", Method: "GET", Pattern: "/x"}}},
		"underscore":     {Routes: []httpapi.Route{{Name: "create_job", Method: "GET", Pattern: "/x"}}},
		"duplicate":      {Routes: []httpapi.Route{{Name: "a-b", Method: "GET", Pattern: "/x"}, {Name: "a-b", Method: "PUT", Pattern: "/x"}}},
		"kind with dash": {Kinds: []sweep.Kind{"dead-letters"}},
	} {
		if _, err := deploygen.Functions(bad); err == nil {
			t.Errorf("%s: Functions succeeded, want an error", name)
		}
	}
}

// TestKindIdents: the sweeper mains name the constants of package sweep.
func TestKindIdents(t *testing.T) {
	t.Parallel()
	in, err := deploygen.RepoInput(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range sweep.Kinds {
		id, ok := in.KindIdents[k]
		if !ok {
			t.Errorf("no constant found for sweep kind %q", k)
			continue
		}
		if want := strings.ToUpper(string(k)[:1]) + string(k)[1:]; id != want {
			t.Errorf("kind %q: constant %s, want %s", k, id, want)
		}
	}
}

// TestGrowth: a bigger route table and two new sweep kinds cost nothing
// but `make generate`: every artefact appears, the mains compile, the
// template stays one YAML document, a second run changes nothing.
func TestGrowth(t *testing.T) {
	t.Parallel()
	dir := tempRepo(t)
	in := grown(t)
	plan, err := deploygen.Generate(dir, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Write(dir); err != nil {
		t.Fatal(err)
	}
	if problems, err := plan.Check(dir); err != nil || len(problems) > 0 {
		t.Fatalf("Check after Write = %q, %v", problems, err)
	}
	again, err := plan.Write(dir)
	if err != nil || len(again) > 0 {
		t.Errorf("a second Write changed %q (%v), want nothing", again, err)
	}
	fs, err := deploygen.Functions(in)
	if err != nil {
		t.Fatal(err)
	}
	var tmpl struct {
		Resources map[string]struct {
			Type string `yaml:"Type"`
		} `yaml:"Resources"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &tmpl); err != nil {
		t.Fatalf("generated template.yaml: %v", err)
	}
	mk, err := os.ReadFile(filepath.Join(dir, deploygen.MakefileInclude))
	if err != nil {
		t.Fatal(err)
	}
	overlay := map[string]string{}
	var pkgs []string
	for _, f := range fs {
		for _, p := range []string{f.Dir + "/main.go", f.Event} {
			if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
				t.Errorf("%s: %v", f.LogicalID, err)
			}
		}
		if !bytes.Contains(mk, []byte("\t"+f.LogicalID+":"+f.Dir)) {
			t.Errorf("%s lacks %s:%s", deploygen.MakefileInclude, f.LogicalID, f.Dir)
		}
		if r, ok := tmpl.Resources[f.LogicalID]; !ok || r.Type != "AWS::Serverless::Function" {
			t.Errorf("template.yaml lacks the function %s", f.LogicalID)
		}
		if r, ok := tmpl.Resources[f.LogicalID+"Logs"]; !ok || r.Type != "AWS::Logs::LogGroup" {
			t.Errorf("template.yaml lacks the log group %sLogs", f.LogicalID)
		}
		abs, err := filepath.Abs(filepath.Join(repoRoot, f.Dir, "main.go"))
		if err != nil {
			t.Fatal(err)
		}
		overlay[abs] = filepath.Join(dir, f.Dir, "main.go")
		pkgs = append(pkgs, "./"+f.Dir)
	}
	src, err := os.ReadFile(filepath.Join(dir, "sweeper/vacuum/main.go"))
	if err != nil || !bytes.Contains(src, []byte(`lambdamain.Sweep(sweep.Kind("vacuum"))`)) {
		t.Errorf("sweeper/vacuum/main.go = %s (%v), want a sweep.Kind conversion (no constant yet)", src, err)
	}
	alarms := 0
	for id := range tmpl.Resources {
		if strings.HasPrefix(id, "RouteFunctionsAlarm") || strings.HasPrefix(id, "SweepersAlarm") {
			alarms++
		}
	}
	if want := (len(in.Routes)+4)/5 + 1; alarms != want {
		t.Errorf("%d function alarms for %d routes and %d sweepers, want %d", alarms, len(in.Routes), len(in.Kinds), want)
	}

	// The generated mains compile where they would live in the repository,
	// next to the route variables a new route comes with (routes.go).
	vars := "package httpapi\n\nvar (\n"
	for _, r := range in.Routes[len(httpapi.Routes()):] {
		vars += fmt.Sprintf("\t%s = Route{Name: %q, Method: %q, Pattern: %q, handler: (*API).health}\n", deploygen.RouteVar(r.Name), r.Name, r.Method, r.Pattern)
	}
	vars += ")\n"
	varsFile := filepath.Join(t.TempDir(), "growth.go")
	if err := os.WriteFile(varsFile, []byte(vars), 0o644); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(filepath.Join(repoRoot, "shared", "httpapi", "zz_growth.go"))
	if err != nil {
		t.Fatal(err)
	}
	overlay[abs] = varsFile
	ov, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		t.Fatal(err)
	}
	ovFile := filepath.Join(t.TempDir(), "overlay.json")
	if err := os.WriteFile(ovFile, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", append([]string{"list", "-e=false", "-export", "-overlay", ovFile}, pkgs...)...) // compiles, no link
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("compiling the generated mains: %v\n%s", err, out)
	}
}

// TestSkeletonEvent: a skeleton is a payload 2.0 event API Gateway could
// send for the route, and the Lambda adapter routes it to the route's
// handler with every path parameter.
func TestSkeletonEvent(t *testing.T) {
	t.Parallel()
	dir := tempRepo(t)
	in := grown(t)
	plan, err := deploygen.Generate(dir, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range in.Routes {
		sample := plan.Samples["events/"+r.Name+".json"]
		dec := json.NewDecoder(bytes.NewReader(sample))
		dec.DisallowUnknownFields()
		var ev events.APIGatewayV2HTTPRequest
		if err := dec.Decode(&ev); err != nil {
			t.Errorf("%s: %v", r.Name, err)
			continue
		}
		params := deploygen.PathParams(r.Pattern)
		check := func(what string, got, want any) {
			t.Helper()
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %s = %#v, want %#v", r.Name, what, got, want)
			}
		}
		check("version", ev.Version, "2.0")
		check("routeKey", ev.RouteKey, r.Method+" "+r.Pattern)
		check("requestContext.routeKey", ev.RequestContext.RouteKey, ev.RouteKey)
		check("requestContext.http.method", ev.RequestContext.HTTP.Method, r.Method)
		check("requestContext.http.path", ev.RequestContext.HTTP.Path, ev.RawPath)
		check("requestContext.stage", ev.RequestContext.Stage, "$default")
		check("path parameters", len(ev.PathParameters), len(params))
		if strings.Contains(ev.RawPath, "{") {
			t.Errorf("%s: rawPath %q has an unfilled parameter", r.Name, ev.RawPath)
		}

		// Route it as the function would: the adapter, then a mux with the route's pattern.
		var seen map[string]string
		mux := http.NewServeMux()
		mux.HandleFunc(r.Method+" "+r.Pattern, func(w http.ResponseWriter, req *http.Request) {
			seen = map[string]string{}
			for _, p := range params {
				seen[p] = req.PathValue(p)
			}
			w.WriteHeader(http.StatusNoContent)
		})
		out, err := lambdahttp.New(mux, nil).Invoke(t.Context(), sample)
		if err != nil {
			t.Errorf("%s: Invoke: %v", r.Name, err)
			continue
		}
		var resp events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(out, &resp); err != nil || resp.StatusCode != http.StatusNoContent {
			t.Errorf("%s: the skeleton did not reach the route's handler: %s", r.Name, out)
			continue
		}
		want := map[string]string{}
		for k, v := range ev.PathParameters {
			want[k] = v
		}
		check("path values seen by the handler", seen, want)
	}
}

// TestWriteAndCheck: Write never overwrites a sample and removes the
// mains of removed routes; Check reports every kind of drift.
func TestWriteAndCheck(t *testing.T) {
	t.Parallel()
	dir := tempRepo(t)
	in, err := deploygen.RepoInput(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := deploygen.Generate(dir, in)
	if err != nil {
		t.Fatal(err)
	}
	edited := []byte(`{"hand": "written"}`)
	write := func(rel string, data []byte) {
		t.Helper()
		path := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("events/create-job.json", edited)
	if _, err := plan.Write(dir); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "events/create-job.json")); !bytes.Equal(got, edited) {
		t.Errorf("Write replaced a sample: %s", got)
	}
	check := func(want ...string) {
		t.Helper()
		problems, err := plan.Check(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(problems) != len(want) {
			t.Fatalf("Check = %q, want %d problem(s) %q", problems, len(want), want)
		}
		for i := range want {
			if !strings.Contains(problems[i], want[i]) {
				t.Errorf("Check = %q, want %q", problems, want)
			}
		}
	}
	check()

	main := filepath.Join(dir, "functions/health/main.go")
	orig, _ := os.ReadFile(main)
	write("functions/health/main.go", append(orig, "// edited\n"...))
	check("functions/health/main.go differs")
	write("functions/health/main.go", orig)

	if err := os.Remove(filepath.Join(dir, "events/info.json")); err != nil {
		t.Fatal(err)
	}
	check("events/info.json is missing")
	write("events/info.json", edited)

	tmpl, _ := os.ReadFile(filepath.Join(dir, "template.yaml"))
	write("template.yaml", bytes.Replace(tmpl, []byte("Path: '/health'"), []byte("Path: '/healthz'"), 1))
	check("template.yaml differs")
	write("template.yaml", tmpl)

	if err := os.Remove(filepath.Join(dir, deploygen.MakefileInclude)); err != nil {
		t.Fatal(err)
	}
	check(deploygen.MakefileInclude + " is missing")

	write("functions/gone/main.go", append([]byte(deploygen.Header+"\n\n"), "package main\n"...))
	write("functions/custom/main.go", []byte("package main\n")) // not generated: left alone
	check(deploygen.MakefileInclude+" is missing", "functions/gone/main.go belongs to no route")
	changed, err := plan.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(changed, "functions/gone/main.go (removed)") || !slices.Contains(changed, deploygen.MakefileInclude) {
		t.Errorf("Write changed %q", changed)
	}
	if _, err := os.Stat(filepath.Join(dir, "functions/gone")); !os.IsNotExist(err) {
		t.Errorf("functions/gone still exists: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "functions/custom/main.go")); err != nil {
		t.Errorf("Write removed a main it did not generate: %v", err)
	}
	check()
}

// TestTemplateMarkers: Generate refuses a template without exactly one
// pair of markers in order.
func TestTemplateMarkers(t *testing.T) {
	t.Parallel()
	in, err := deploygen.RepoInput(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := deploygen.BeginMarker+"\n", deploygen.EndMarker+"\n"
	for name, body := range map[string]string{
		"no markers":     "Resources:\n",
		"no end":         "Resources:\n" + begin,
		"reversed":       "Resources:\n" + end + begin,
		"two beginnings": "Resources:\n" + begin + begin + end,
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "template.yaml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := deploygen.Generate(dir, in); err == nil {
			t.Errorf("%s: Generate succeeded, want an error", name)
		}
	}
}

// TestRouteVars: each route of the table has its variable in package
// httpapi under the name the generated mains use (RouteVar), holding that
// very route, and each function's main passes its path's Allow.
func TestRouteVars(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(repoRoot, "shared", "httpapi", "routes.go"), nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{} // variable -> the route name its literal gives
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.CompositeLit)
				if id, isIdent := lit.Type.(*ast.Ident); !ok || !isIdent || id.Name != "Route" || len(lit.Elts) == 0 {
					continue
				}
				if s, ok := lit.Elts[0].(*ast.BasicLit); ok && s.Kind == token.STRING {
					vars[name.Name], _ = strconv.Unquote(s.Value)
				}
			}
		}
	}
	in, err := deploygen.RepoInput(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := deploygen.Functions(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range fs {
		if fn.Route == nil {
			continue
		}
		v := deploygen.RouteVar(fn.Route.Name)
		if got, ok := vars[v]; !ok || got != fn.Route.Name {
			t.Errorf("route %s: variable %s holds route %q (declared: %v), want %q", fn.Route.Name, v, got, ok, fn.Route.Name)
		}
		if want := httpapi.Allow(fn.Route.Pattern); fn.Allow != want {
			t.Errorf("route %s: Allow %q, want %q", fn.Route.Name, fn.Allow, want)
		}
	}
	if len(vars) != len(httpapi.Routes()) {
		t.Errorf("%d route variables for %d routes", len(vars), len(httpapi.Routes()))
	}
}
