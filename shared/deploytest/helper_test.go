package deploytest_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/deploytest"
	"github.com/ocyless/ocyless/shared/redistest"
)

// TestBuildAndRunCold drives the helpers the benchmarks use: the
// Makefile's function list and build targets, and a cold start against the
// fake Runtime API with a real redis-server.
func TestBuildAndRunCold(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a bootstrap")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the bootstraps are linux binaries")
	}
	root := deploytest.RepoRoot(t)
	var health deploytest.Function
	for _, f := range deploytest.Functions(t) {
		if f.ID == "HealthFunction" {
			health = f
		}
	}
	if health.Dir != "functions/health" || health.EventFile() != filepath.Join("events", "health.json") {
		t.Fatalf("HealthFunction = %+v, event %s", health, health.EventFile())
	}
	dir := t.TempDir()
	deploytest.Build(t, []deploytest.Function{health}, runtime.GOARCH, dir) // the cold start below runs it
	bin := filepath.Join(dir, health.ID, "bootstrap")
	payload, err := os.ReadFile(filepath.Join(root, health.EventFile()))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := redistest.StartServer(redistest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })

	cs, err := deploytest.RunCold(t, bin, []string{"AWS_REGION=eu-west-1", "OCYPOD_REDIS_URL=" + srv.URL()}, payload, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		StatusCode int    `json:"statusCode"`
		Body       string `json:"body"`
	}
	if err := json.Unmarshal(cs.Result.Body, &resp); err != nil || cs.Result.IsError || resp.StatusCode != http.StatusOK {
		t.Errorf("health answered %s (%v)", cs.Result.Body, err)
	}
	if cs.Init <= 0 || cs.Answer < cs.Init {
		t.Errorf("init %v, answer %v: want 0 < init <= answer", cs.Init, cs.Answer)
	}

	// An init failure is an error naming it, not a wait for the timeout.
	start := time.Now()
	_, err = deploytest.RunCold(t, bin, []string{"AWS_REGION=eu-west-1", "OCYPOD_REDIS_URL=redis://localhost:notaport"}, payload, 30*time.Second)
	if err == nil || !strings.Contains(err.Error(), "init") {
		t.Errorf("RunCold with a bad URL = %v, want an init failure", err)
	}
	if waited := time.Since(start); waited >= 30*time.Second {
		t.Errorf("RunCold waited %v for a process that had exited", waited)
	}
}
