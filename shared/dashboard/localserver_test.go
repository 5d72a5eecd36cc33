package dashboard_test

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/deploytest"
)

// startLocalServer builds cmd/ocypod-local and runs it as `make run` does
// (embedded Redis, 127.0.0.1, the default Host and Origin checks) on a free
// port; it is stopped with SIGTERM when t ends.
func startLocalServer(t *testing.T) *server {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ocypod-local")
	build := exec.Command("go", "build", "-o", bin, "./cmd/ocypod-local")
	build.Dir = deploytest.RepoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/ocypod-local: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OCYPOD_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "OCYPOD_PORT=0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	addr := make(chan string, 1)
	var head strings.Builder // the log until the address, for a failure message
	go func() {
		defer close(done)
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			if _, rest, ok := strings.Cut(lines.Text(), "Starting queue server at: "); ok {
				addr <- strings.Trim(strings.Fields(rest)[0], `"`)
				break
			}
			head.WriteString(lines.Text() + "\n")
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	select {
	case a := <-addr:
		return &server{t: t, url: "http://" + a}
	case <-done:
		t.Fatalf("ocypod-local exited before listening:\n%s", head.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("ocypod-local did not listen within 30s:\n%s", head.String())
	}
	return nil
}

// TestDashboardPassesLocalGuard opens the page on the local server under
// both of its loopback names: its reads (no Origin) and its changes
// (Origin: the page's own) pass the Host and Origin checks that keep other
// sites' pages out.
func TestDashboardPassesLocalGuard(t *testing.T) {
	b := startBrowser(t)
	s := startLocalServer(t)
	s.must("PUT", "/queue/guarded", `{}`, http.StatusCreated)

	// The checks are on: a page of another site is refused.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPatch, s.url+"/queue/guarded", strings.NewReader(`{"paused":true}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "http://evil.example")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("PATCH with Origin: http://evil.example = %d, want 403 from the local server's checks", res.StatusCode)
	}

	port := s.url[strings.LastIndexByte(s.url, ':'):]
	for _, step := range []struct {
		host, click, state string
		paused             bool
	}{
		{"127.0.0.1", "pause", "paused", true},
		{"localhost", "resume", "active", false},
	} {
		t.Run(step.host, func(t *testing.T) {
			p := b.newPage(t, pageOptions{})
			p.navigate("http://" + step.host + port + "/ui")
			row := `tr[data-queue="guarded"]`
			p.wait(`document.body.dataset.state === 'ready' && document.querySelector('` + row + `')`)
			p.click(row + ` [data-action=` + step.click + `]`)
			p.wait(`document.body.dataset.state === 'ready' && document.querySelector('` + row + ` [data-field=state]').textContent === '` + step.state + `'`)
			got := s.must("GET", "/queue/guarded", "", http.StatusOK)
			if strings.Contains(got, `"paused":true`) != step.paused {
				t.Errorf("after %s on %s: GET /queue/guarded = %s", step.click, step.host, got)
			}
			noProblems(t, p)
		})
	}
}
