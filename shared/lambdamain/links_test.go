package lambdamain_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocyless/ocyless/internal/deploygen"
	"github.com/ocyless/ocyless/shared/deploytest"
)

// TestLinksOwnRouteOnly: a function's bootstrap links its own route's
// handler and no other route's (nor the OpenAPI document or the dashboard
// page, which only their routes serve), and a sweeper links no HTTP layer
// at all. The binary is built as the Makefile builds it, symbols kept.
func TestLinksOwnRouteOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a bootstrap")
	}
	root := deploytest.RepoRoot(t)
	bin := filepath.Join(t.TempDir(), "health")
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-buildvcs=false", "-o", bin, "./functions/health")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./functions/health: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	syms := string(out)
	if !strings.Contains(syms, "shared/httpapi.(*API).health") {
		t.Fatalf("the health bootstrap lacks its own handler; symbols:\n%.2000s", syms)
	}
	for _, other := range []string{
		"shared/httpapi.(*API).createJob", "shared/httpapi.(*API).updateJob", "shared/httpapi.(*API).listJobs",
		"shared/httpapi.(*API).openapi", "shared/httpapi.openapiDoc", "shared/httpapi.routes",
		"shared/dashboard.files",
	} {
		if strings.Contains(syms, other+"\n") || strings.Contains(syms, other+".") {
			t.Errorf("the health bootstrap links %s", other)
		}
	}

	cmd = exec.Command("go", "list", "-tags", "lambda.norpc", "-deps", "./sweeper/...")
	cmd.Dir = root
	deps, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./sweeper/...: %v", err)
	}
	for _, pkg := range []string{"shared/httpapi", "shared/lambdahttp", "shared/dashboard", "aws-lambda-go-api-proxy"} {
		if strings.Contains(string(deps), pkg) {
			t.Errorf("the sweepers import %s", pkg)
		}
	}
}

// TestHTTPFunctionsLinkNoLambdaClient: no HTTP function (functions/...)
// imports the AWS SDK's Lambda client, which only the push dispatcher
// needs (the functions that wake it send a hand-signed request: package
// wake, which exactly those functions link), and package push, which the HTTP functions import for the push
// settings and the target policy, imports no AWS SDK at all (its Lambda
// invocations go through package push/awslambda). The Lambda client
// costs each bootstrap about half a megabyte against its size goal
// (docs/benchmarks.md).
func TestHTTPFunctionsLinkNoLambdaClient(t *testing.T) {
	root := deploytest.RepoRoot(t)
	list := func(pkgs ...string) string {
		t.Helper()
		cmd := exec.Command("go", append([]string{"list", "-tags", "lambda.norpc", "-deps", "-f", "{{.ImportPath}}: {{join .Imports \" \"}}"}, pkgs...)...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %v: %v", pkgs, err)
		}
		return string(out)
	}
	for _, line := range strings.Split(list("./functions/..."), "\n") {
		if pkg, imports, ok := strings.Cut(line, ": "); ok && strings.Contains(" "+imports+" ", " github.com/aws/aws-sdk-go-v2/service/lambda ") {
			t.Errorf("an HTTP function's dependency %s imports the SDK's Lambda client", pkg)
		}
	}
	in, err := deploygen.RepoInput(root)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := deploygen.Functions(in)
	if err != nil {
		t.Fatal(err)
	}
	wakers := 0
	for _, f := range fs {
		if f.Route == nil {
			continue
		}
		deps := list("./" + f.Dir)
		if links := strings.Contains(deps, "/shared/lambdamain/wake:"); links != f.Wakes {
			t.Errorf("%s links package wake: %v, want %v", f.Dir, links, f.Wakes)
		}
		if f.Wakes {
			wakers++
		}
	}
	if wakers == 0 {
		t.Error("no HTTP function wakes the push dispatcher: the Lambda client check above covers none")
	}
	var sdk []string
	for _, line := range strings.Split(list("./shared/push"), "\n") {
		if pkg, _, ok := strings.Cut(line, ": "); ok && (strings.HasPrefix(pkg, "github.com/aws/aws-sdk-go-v2") || strings.HasPrefix(pkg, "github.com/aws/smithy-go")) {
			sdk = append(sdk, pkg)
		}
	}
	if len(sdk) > 0 {
		t.Errorf("shared/push depends on %d AWS SDK packages: %v", len(sdk), sdk)
	}
}
