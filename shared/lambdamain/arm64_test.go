package lambdamain_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ocyless/ocyless/shared/deploytest"
	"github.com/ocyless/ocyless/shared/redistest"
)

// TestArm64Bootstrap runs the artifacts that are deployed — linux/arm64,
// built by the Makefile's build-<LogicalId> targets with their default
// GOARCH — under qemu-aarch64-static against the fake Runtime API and a real
// redis-server: the health check and a queue creation must answer. Skipped
// where qemu-user-static is not installed (.ci/run installs it).
func TestArm64Bootstrap(t *testing.T) {
	if testing.Short() {
		t.Skip("builds arm64 bootstraps")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the bootstraps are linux binaries")
	}
	var runner []string
	if runtime.GOARCH != "arm64" {
		qemu, err := exec.LookPath("qemu-aarch64-static")
		if err != nil {
			t.Skip("qemu-aarch64-static not installed (Debian package qemu-user-static)")
		}
		runner = []string{qemu}
	}
	srv, err := redistest.StartServer(redistest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })

	repoRoot := deploytest.RepoRoot(t)
	dir := t.TempDir()
	bins := map[string]string{}
	for name, id := range map[string]string{"health": "HealthFunction", "put-queue": "PutQueueFunction"} {
		out := filepath.Join(dir, id)
		cmd := exec.Command("make", "-s", "-C", repoRoot, "build-"+id, "ARTIFACTS_DIR="+out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make build-%s: %v\n%s", id, err, b)
		}
		bin := filepath.Join(out, "bootstrap")
		if len(runner) > 0 {
			// deploytest.Start runs one executable: wrap the emulator call.
			wrapper := filepath.Join(out, "run.sh")
			script := fmt.Sprintf("#!/bin/sh\nexec %s %s\n", runner[0], bin)
			if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			bin = wrapper
		}
		bins[name] = bin
	}
	e := &e2e{
		t:     t,
		root:  repoRoot,
		bins:  bins,
		procs: map[string]*deploytest.Process{},
		env: []string{
			"AWS_REGION=eu-west-1",
			"OCYPOD_REDIS_URL=" + srv.URL(),
			"OCYPOD_KEY_NAMESPACE=" + redistest.Namespace(t),
		},
	}
	expect(t, "arm64 GET /health", e.call("health", e.request("health", nil, "", "")), http.StatusOK, `{"status":"healthy"}`)
	expect(t, "arm64 PUT /queue/arm", e.call("put-queue", e.request("put-queue", map[string]string{"name": "arm"}, `{}`, "")), http.StatusCreated, "")
}
