package deploytest_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ocyless/ocyless/internal/deploygen"
	"github.com/ocyless/ocyless/shared/deploytest"
)

// TestGeneratedFilesUpToDate fails when anything `make generate` writes
// differs from what is committed, or when a route or sweep kind lacks its
// function, its sample event, its build target or its template resources.
func TestGeneratedFilesUpToDate(t *testing.T) {
	t.Parallel()
	root := deploytest.RepoRoot(t)
	in, err := deploygen.RepoInput(root)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := deploygen.Generate(root, in)
	if err != nil {
		t.Fatal(err)
	}
	problems, err := plan.Check(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: run make generate", p)
	}
}

func subdirs(t *testing.T, root, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, dir))
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

// TestDeploymentAgreesWithRouteTable fails when functions/, sweeper/,
// events/ or the Makefile's list hold more or less than the route table
// and the sweep kinds: a removed route leaves nothing behind.
func TestDeploymentAgreesWithRouteTable(t *testing.T) {
	t.Parallel()
	root := deploytest.RepoRoot(t)
	var wantDirs, wantEvents, wantList []string
	for _, f := range expected(t) {
		wantDirs = append(wantDirs, f.Dir)
		wantEvents = append(wantEvents, f.Event)
		wantList = append(wantList, f.LogicalID+":"+f.Dir)
	}
	slices.Sort(wantDirs)
	slices.Sort(wantEvents)

	gotDirs := append(subdirs(t, root, "functions"), subdirs(t, root, "sweeper")...)
	if _, err := os.Stat(filepath.Join(root, deploygen.DispatcherDir, "main.go")); err == nil {
		gotDirs = append(gotDirs, deploygen.DispatcherDir)
	}
	slices.Sort(gotDirs)
	if !slices.Equal(gotDirs, wantDirs) {
		t.Errorf("function directories = %q,\nwant %q (run make generate; remove what belongs to no route)", gotDirs, wantDirs)
	}
	files, _ := filepath.Glob(filepath.Join(root, "events", "*.json"))
	var gotEvents []string
	for _, file := range files {
		if base := filepath.Base(file); base != "local-env.json" {
			gotEvents = append(gotEvents, "events/"+base)
		}
	}
	slices.Sort(gotEvents)
	if !slices.Equal(gotEvents, wantEvents) {
		t.Errorf("events/ = %q,\nwant %q (run make generate; remove samples of removed routes)", gotEvents, wantEvents)
	}
	var gotList []string
	for _, f := range deploytest.Functions(t) {
		gotList = append(gotList, f.ID+":"+f.Dir)
		if want := filepath.Join("events", filepath.Base(f.Dir)+".json"); !strings.HasPrefix(f.Dir, "sweeper/") && f.EventFile() != want {
			t.Errorf("%s: EventFile %s, want %s", f.ID, f.EventFile(), want)
		}
	}
	if !slices.Equal(gotList, wantList) {
		t.Errorf("make lambda-list = %q,\nwant %q (run make generate)", gotList, wantList)
	}
}

// TestMakefileBuildTargets runs `make -n build-<LogicalId>` for every
// function: the recipe sam build runs must build exactly that package,
// into $(ARTIFACTS_DIR)/bootstrap, for linux/arm64 by default.
func TestMakefileBuildTargets(t *testing.T) {
	t.Parallel()
	root := deploytest.RepoRoot(t)
	for _, f := range expected(t) {
		out, err := exec.Command("make", "-n", "-s", "-C", root, "build-"+f.LogicalID, "ARTIFACTS_DIR=/artifacts/"+f.LogicalID).CombinedOutput()
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
	out, err := exec.Command("make", "-n", "-s", "-C", root, "build-HealthFunction", "ARTIFACTS_DIR=/a", "GOARCH_LAMBDA=amd64").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "GOARCH=amd64 ") {
		t.Errorf("make -n build-HealthFunction GOARCH_LAMBDA=amd64 = %v\n%s", err, out)
	}
}

// TestLocalEnv: events/local-env.json sets every variable the template
// does, pointing at a host Redis with TLS and IAM off.
func TestLocalEnv(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(deploytest.RepoRoot(t), "events", "local-env.json"))
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
