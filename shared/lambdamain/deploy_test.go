package lambdamain_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ocyless/ocyless/shared/httpapi"
	"github.com/ocyless/ocyless/shared/sweep"
)

// fn is one Lambda function as every artefact should describe it.
type fn struct {
	LogicalID, Dir, Event string // Dir: package directory; Event: events/ file
	Route                 *httpapi.Route
	Kind                  sweep.Kind
}

// sweeperID is the template.yaml name of a sweeper, e.g. SweepTimeoutsFunction.
func sweeperID(k sweep.Kind) string { return "Sweep" + capitalize(string(k)) + "Function" }

// capitalize upper-cases the first letter of an ASCII word.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// expectedFunctions derives every function from the route table and the
// sweep kinds: the single source of truth.
func expectedFunctions() map[string]fn {
	out := map[string]fn{}
	for _, r := range httpapi.Routes() {
		id := httpapi.LogicalID(r.Name)
		out[id] = fn{LogicalID: id, Dir: "functions/" + r.Name, Event: r.Name + ".json", Route: &r}
	}
	for _, k := range sweep.Kinds {
		id := sweeperID(k)
		out[id] = fn{LogicalID: id, Dir: "sweeper/" + string(k), Event: "sweep-" + string(k) + ".json", Kind: k}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func subdirs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(repoRoot, dir))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, dir+"/"+e.Name())
		}
	}
	return out
}

// TestDeploymentAgreesWithRouteTable fails when functions/, sweeper/, the
// main.go files, events/ or the Makefile's list disagree with the route
// table and the sweep kinds.
func TestDeploymentAgreesWithRouteTable(t *testing.T) {
	t.Parallel()
	want := expectedFunctions()
	var wantDirs, wantEvents []string
	for _, f := range want {
		wantDirs = append(wantDirs, f.Dir)
		wantEvents = append(wantEvents, f.Event)
	}
	slices.Sort(wantDirs)
	slices.Sort(wantEvents)

	gotDirs := append(subdirs(t, "functions"), subdirs(t, "sweeper")...)
	slices.Sort(gotDirs)
	if !slices.Equal(gotDirs, wantDirs) {
		t.Errorf("function directories = %q,\nwant %q", gotDirs, wantDirs)
	}
	for _, f := range want {
		src, err := os.ReadFile(filepath.Join(repoRoot, f.Dir, "main.go"))
		if err != nil {
			t.Error(err)
			continue
		}
		var call string
		if f.Route != nil {
			call = `lambdamain.HTTP("` + f.Route.Name + `")`
		} else {
			call = `lambdamain.Sweep(sweep.` + capitalize(string(f.Kind)) + `)`
		}
		if !strings.Contains(string(src), "func main() { "+call+" }") {
			t.Errorf("%s/main.go does not contain `func main() { %s }`", f.Dir, call)
		}
	}

	files, _ := filepath.Glob(filepath.Join(repoRoot, "events", "*.json"))
	var gotEvents []string
	for _, file := range files {
		if base := filepath.Base(file); base != "local-env.json" {
			gotEvents = append(gotEvents, base)
		}
	}
	slices.Sort(gotEvents)
	if !slices.Equal(gotEvents, wantEvents) {
		t.Errorf("events/ = %q,\nwant %q", gotEvents, wantEvents)
	}

	out, err := exec.Command("make", "-s", "-C", repoRoot, "lambda-list").Output()
	if err != nil {
		t.Fatalf("make lambda-list: %v", err)
	}
	gotList, wantList := strings.Fields(string(out)), []string(nil)
	for _, f := range want {
		wantList = append(wantList, f.LogicalID+":"+f.Dir)
	}
	slices.Sort(gotList)
	slices.Sort(wantList)
	if !slices.Equal(gotList, wantList) {
		t.Errorf("Makefile LAMBDA_FUNCTIONS = %q,\nwant %q", gotList, wantList)
	}
}

// TestMakefileBuildTargets runs `make -n build-<LogicalId>` for every
// function: the recipe sam build runs must build exactly that package,
// into $(ARTIFACTS_DIR)/bootstrap, for linux/arm64 by default.
func TestMakefileBuildTargets(t *testing.T) {
	t.Parallel()
	for _, f := range expectedFunctions() {
		out, err := exec.Command("make", "-n", "-s", "-C", repoRoot, "build-"+f.LogicalID, "ARTIFACTS_DIR=/artifacts/"+f.LogicalID).CombinedOutput()
		if err != nil {
			t.Errorf("make -n build-%s: %v\n%s", f.LogicalID, err, out)
			continue
		}
		want := "CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -buildvcs=false " +
			"-ldflags='-s -w -buildid=' -o /artifacts/" + f.LogicalID + "/bootstrap ./" + f.Dir
		if !strings.Contains(string(out), want+"\n") {
			t.Errorf("make -n build-%s =\n%s\nwant a line\n%s", f.LogicalID, out, want)
		}
	}
	// GOARCH_LAMBDA picks the architecture (the end-to-end test builds for the host).
	out, err := exec.Command("make", "-n", "-s", "-C", repoRoot, "build-HealthFunction", "ARTIFACTS_DIR=/a", "GOARCH_LAMBDA=amd64").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "GOARCH=amd64 ") {
		t.Errorf("make -n build-HealthFunction GOARCH_LAMBDA=amd64 = %v\n%s", err, out)
	}
}

// functionProp returns a function's property, or the Globals.Function one.
func functionProp(tmpl map[string]any, res map[string]any, key string) any {
	if v, ok := asMap(res["Properties"])[key]; ok {
		return v
	}
	return dig(tmpl, "Globals", "Function", key)
}

// TestTemplateAgreesWithRouteTable checks template.yaml's functions and
// events against the route table, the sweep kinds and events/.
func TestTemplateAgreesWithRouteTable(t *testing.T) {
	t.Parallel()
	tmpl := loadTemplate(t)
	if tmpl["Transform"] == nil || !slices.Contains(anyStrings(tmpl["Transform"]), "AWS::Serverless-2016-10-31") {
		t.Errorf("Transform = %v, want AWS::Serverless-2016-10-31", tmpl["Transform"])
	}
	resources := asMap(tmpl["Resources"])
	want := expectedFunctions()
	got := map[string]map[string]any{}
	for id, r := range resources {
		if asMap(r)["Type"] == "AWS::Serverless::Function" {
			got[id] = asMap(r)
		}
	}
	if g, w := sortedKeys(got), sortedKeys(want); !slices.Equal(g, w) {
		t.Fatalf("template functions = %q,\nwant %q", g, w)
	}
	if api := asMap(resources["QueueApi"]); api["Type"] != "AWS::Serverless::HttpApi" {
		t.Fatalf("QueueApi is %v, want an AWS::Serverless::HttpApi", api["Type"])
	}
	envVars := asMap(dig(tmpl, "Globals", "Function", "Environment", "Variables"))

	for id, res := range got {
		f := want[id]
		check := func(what string, gotV, wantV any) {
			t.Helper()
			if !reflect.DeepEqual(gotV, wantV) {
				t.Errorf("%s: %s = %#v, want %#v", id, what, gotV, wantV)
			}
		}
		check("Metadata.BuildMethod", dig(res, "Metadata", "BuildMethod"), "makefile")
		check("CodeUri", dig(res, "Properties", "CodeUri"), ".")
		check("Runtime", functionProp(tmpl, res, "Runtime"), "provided.al2023")
		check("Architectures", functionProp(tmpl, res, "Architectures"), []any{"arm64"})
		check("Handler", functionProp(tmpl, res, "Handler"), "bootstrap")
		check("Policies", dig(res, "Properties", "Policies"), []any{map[string]any{"Fn::If": []any{
			"UseRedisIam", map[string]any{"Ref": "CacheConnectPolicy"}, map[string]any{"Ref": "AWS::NoValue"}}}})
		if functionProp(tmpl, res, "VpcConfig") == nil {
			t.Errorf("%s: no VpcConfig", id)
		}
		events := asMap(dig(res, "Properties", "Events"))
		if len(events) != 1 {
			t.Errorf("%s: %d events, want 1", id, len(events))
			continue
		}
		var ev map[string]any
		for _, e := range events {
			ev = asMap(e)
		}
		props := asMap(ev["Properties"])
		timeout, _ := functionProp(tmpl, res, "Timeout").(int)
		if f.Route != nil {
			check("event Type", ev["Type"], "HttpApi")
			check("event Method", props["Method"], f.Route.Method)
			check("event Path", props["Path"], f.Route.Pattern)
			check("event ApiId", props["ApiId"], map[string]any{"Ref": "QueueApi"})
			check("event PayloadFormatVersion", props["PayloadFormatVersion"], "2.0")
			if timeout <= 0 || timeout >= 30 {
				t.Errorf("%s: Timeout %d, want 1..29 (below the HTTP API's 30 s integration timeout)", id, timeout)
			}
			continue
		}
		check("event Type", ev["Type"], "ScheduleV2")
		check("event FlexibleTimeWindow", props["FlexibleTimeWindow"], map[string]any{"Mode": "OFF"})
		check("event RetryPolicy.MaximumRetryAttempts", dig(props, "RetryPolicy", "MaximumRetryAttempts"), 0)
		check("event ScheduleExpression", props["ScheduleExpression"], map[string]any{"Ref": "SweepRate"})
		if timeout < 30 || timeout > 900 {
			t.Errorf("%s: Timeout %d, want a long-running sweeper (30..900 s)", id, timeout)
		}
		// The scheduled Input is the sample event, byte for byte in meaning.
		sample, err := os.ReadFile(filepath.Join(repoRoot, "events", f.Event))
		if err != nil {
			t.Error(err)
			continue
		}
		input, _ := props["Input"].(string)
		var a, b any
		if json.Unmarshal([]byte(input), &a) != nil || json.Unmarshal(sample, &b) != nil || !reflect.DeepEqual(a, b) {
			t.Errorf("%s: Input %q differs from events/%s %q", id, input, f.Event, sample)
		}
	}

	rate, _ := dig(tmpl, "Parameters", "SweepRate", "Default").(string)
	if !regexp.MustCompile(`^rate\((1 (minute|hour|day)|([2-9]|[1-9][0-9]+) (minutes|hours|days))\)$`).MatchString(rate) {
		t.Errorf("SweepRate default %q is not a valid rate() expression", rate)
	}
	for _, name := range []string{"OCYPOD_REDIS_URL", "OCYPOD_KEY_NAMESPACE", "OCYPOD_REDIS_CLUSTER", "OCYPOD_REDIS_IAM_USER", "OCYPOD_REDIS_CACHE_NAME", "OCYPOD_REDIS_SERVERLESS"} {
		if _, ok := envVars[name]; !ok {
			t.Errorf("Globals.Function.Environment lacks %s", name)
		}
	}
	if url, _ := dig(tmpl, "Parameters", "RedisUrl", "Default").(string); !strings.HasPrefix(url, "rediss://") {
		t.Errorf("RedisUrl default %q, want TLS (rediss://)", url)
	}
	if _, ok := dig(tmpl, "Outputs", "ApiUrl", "Value").(map[string]any); !ok {
		t.Error("no ApiUrl output")
	}
}

// TestTemplateSecureByDefault: IAM auth on the API unless ApiAuth=NONE,
// and no IAM statement with a wildcard action.
func TestTemplateSecureByDefault(t *testing.T) {
	t.Parallel()
	tmpl := loadTemplate(t)
	if d := dig(tmpl, "Parameters", "ApiAuth", "Default"); d != "AWS_IAM" {
		t.Errorf("ApiAuth default = %v, want AWS_IAM", d)
	}
	wantAuth := map[string]any{"EnableIamAuthorizer": true, "DefaultAuthorizer": "AWS_IAM"}
	for params, want := range map[string]any{"AWS_IAM": wantAuth, "NONE": nil} {
		resolved, err := resolveLanguageExtensions(tmpl, map[string]string{"ApiAuth": params})
		if err != nil {
			t.Fatal(err)
		}
		if got := dig(resolved, "Resources", "QueueApi", "Properties", "Auth"); !reflect.DeepEqual(got, want) {
			t.Errorf("ApiAuth=%s: QueueApi Auth = %v, want %v", params, got, want)
		}
	}
	if !slices.Contains(anyStrings(tmpl["Transform"]), "AWS::LanguageExtensions") {
		t.Error("the ApiAuth switch needs the AWS::LanguageExtensions transform (SAM reads HttpApi Auth literally)")
	}
	var walk func(path string, x any)
	walk = func(path string, x any) {
		switch x := x.(type) {
		case map[string]any:
			for k, v := range x {
				if k == "Action" || k == "NotAction" {
					for _, a := range anyStrings(v) {
						if strings.Contains(a, "*") {
							t.Errorf("%s: wildcard action %q", path, a)
						}
					}
				}
				walk(path+"/"+k, v)
			}
		case []any:
			for _, v := range x {
				walk(path, v)
			}
		}
	}
	walk("", tmpl["Resources"])
	policy := dig(tmpl, "Resources", "CacheConnectPolicy")
	if asMap(policy)["Condition"] != "UseRedisIam" {
		t.Error("CacheConnectPolicy must only exist with IAM auth (Condition: UseRedisIam)")
	}
}

// TestLocalEnv: events/local-env.json sets every variable the template
// does, pointing at a host Redis with TLS and IAM off.
func TestLocalEnv(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(repoRoot, "events", "local-env.json"))
	if err != nil {
		t.Fatal(err)
	}
	var env struct{ Parameters map[string]string }
	if err := json.Unmarshal(data, &env); err != nil {
		t.Fatalf("local-env.json: %v", err)
	}
	vars := asMap(dig(loadTemplate(t), "Globals", "Function", "Environment", "Variables"))
	if g, w := sortedKeys(env.Parameters), sortedKeys(vars); !slices.Equal(g, w) {
		t.Errorf("local-env.json sets %q, template sets %q", g, w)
	}
	if u := env.Parameters["OCYPOD_REDIS_URL"]; !strings.HasPrefix(u, "redis://") {
		t.Errorf("local OCYPOD_REDIS_URL = %q, want plain redis:// on the host", u)
	}
	if env.Parameters["OCYPOD_REDIS_IAM_USER"] != "" {
		t.Error("local OCYPOD_REDIS_IAM_USER must be empty (IAM off)")
	}
}

// anyStrings returns x as a list of strings (a lone string is a list of one).
func anyStrings(x any) []string {
	switch x := x.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, v := range x {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// TestTemplateParameterDefaults: every parameter default satisfies its own
// AllowedPattern and AllowedValues (CloudFormation would reject the stack).
func TestTemplateParameterDefaults(t *testing.T) {
	t.Parallel()
	for name, p := range asMap(loadTemplate(t)["Parameters"]) {
		def, ok := asMap(p)["Default"]
		if !ok {
			continue
		}
		d := fmt.Sprint(def)
		if pat, ok := asMap(p)["AllowedPattern"].(string); ok && !regexp.MustCompile(pat).MatchString(d) {
			t.Errorf("%s: default %q does not match AllowedPattern %s", name, d, pat)
		}
		if vals := asMap(p)["AllowedValues"]; vals != nil && !slices.Contains(anyStrings(vals), d) {
			t.Errorf("%s: default %q is not among AllowedValues %v", name, d, vals)
		}
	}
}
