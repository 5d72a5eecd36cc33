package main

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// repoRoot is where the Makefile is, from this package's directory.
const repoRoot = "../.."

// makeError is the line GNU make prints when a recipe fails or is
// interrupted ("make: *** [Makefile:17: run] Interrupt").
var makeError = regexp.MustCompile(`(?m)^g?make(\[\d+\])?: \*\*\*`)

// TestMakeRunStops runs a real `make run` and stops it the two ways a user
// does: SIGTERM to make's PID, and Ctrl-C (SIGINT to the whole process
// group, as a terminal sends it). Each time the server shuts down
// gracefully, the port is free, nothing of the group is left, and make
// prints no error.
//
// GNU make ends by re-raising the signal it received once its child has
// exited (the usual exit of a program stopped by a signal), so its status
// is that signal; the shell prints nothing for it after Ctrl-C.
func TestMakeRunStops(t *testing.T) {
	t.Parallel()
	makePath, err := exec.LookPath("make")
	if err != nil {
		t.Fatalf("make is needed for this test: %v", err)
	}
	for name, stop := range map[string]struct {
		sig   syscall.Signal
		group bool
	}{
		"SIGTERM to make": {syscall.SIGTERM, false},
		"Ctrl-C":          {syscall.SIGINT, true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bin := filepath.Join(t.TempDir(), "ocypod-local")
			cmd := exec.Command(makePath, "--no-print-directory", "-C", repoRoot, "run", "RUN_BIN="+bin)
			cmd.Env = cleanEnv("OCYPOD_PORT=0")
			p := startProcess(t, cmd)
			p.server().want(t, "GET", "/health", "", 200, `{"status":"healthy"}`)

			pid := cmd.Process.Pid
			var err error
			if stop.group {
				err = syscall.Kill(-pid, stop.sig)
			} else {
				err = syscall.Kill(pid, stop.sig)
			}
			if err != nil {
				t.Fatal(err)
			}
			ws := p.wait(t)
			out := p.out.String()
			if !(ws.Exited() && ws.ExitStatus() == 0) && !(ws.Signaled() && ws.Signal() == stop.sig) {
				t.Errorf("make ended with %v, want exit 0 or the %v it was sent\n%s", ws, stop.sig, out)
			}
			if makeError.MatchString(out) {
				t.Errorf("make printed an error:\n%s", out)
			}
			if !strings.Contains(out, "msg=Stopped") {
				t.Errorf("the server did not log a graceful stop:\n%s", out)
			}
			if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("processes of make's group still run after make exited (kill -0: %v)\n%s", err, out)
			}
			ln, err := net.Listen("tcp", p.addr)
			if err != nil {
				t.Errorf("port %s still taken after make exited: %v", p.addr, err)
			} else {
				_ = ln.Close()
			}
		})
	}
}

// TestMakeTestNeedsRedis runs `make test` and `make test-deps` with a PATH
// holding only fakes: without redis-server and without a way to install it,
// make stops before any Go command with a message that says how to install
// it; as root with apt-get, test-deps installs the package; with
// redis-server present it does nothing.
func TestMakeTestNeedsRedis(t *testing.T) {
	t.Parallel()
	makePath, err := exec.LookPath("make")
	if err != nil {
		t.Fatalf("make is needed for this test: %v", err)
	}
	fake := func(t *testing.T, dir, name, script string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func(t *testing.T, bin string, args ...string) (string, error) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), makePath, append([]string{"--no-print-directory", "-C", repoRoot}, args...)...)
		cmd.Env = append(cleanEnv(), "PATH="+bin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	read := func(path string) string {
		b, _ := os.ReadFile(path)
		return string(b)
	}

	t.Run("missing", func(t *testing.T) {
		t.Parallel()
		bin := t.TempDir()
		log := filepath.Join(bin, "calls")
		fake(t, bin, "go", "echo go \"$@\" >> "+log+"\n")
		out, err := run(t, bin, "test", "GO="+filepath.Join(bin, "go"))
		if err == nil {
			t.Errorf("make test without redis-server succeeded:\n%s", out)
		}
		for _, want := range []string{"redis-server is not installed", "sudo apt-get install redis-server"} {
			if !strings.Contains(out, want) {
				t.Errorf("make test output lacks %q:\n%s", want, out)
			}
		}
		if calls := read(log); calls != "" {
			t.Errorf("make test ran Go commands without redis-server:\n%s", calls)
		}
	})

	t.Run("apt-get", func(t *testing.T) {
		t.Parallel()
		bin := t.TempDir()
		log := filepath.Join(bin, "calls")
		fake(t, bin, "apt-get", "echo apt-get \"$@\" >> "+log+"\n"+
			"case \"$*\" in *install*redis-server*) printf '#!/bin/sh\\n' > "+bin+"/redis-server; /bin/chmod +x "+bin+"/redis-server;; esac\n")
		out, err := run(t, bin, "test-deps")
		if os.Geteuid() != 0 {
			if err == nil || !strings.Contains(out, "sudo apt-get install redis-server") || read(log) != "" {
				t.Errorf("make test-deps as a user = %v, calls %q, want the install hint without apt-get:\n%s", err, read(log), out)
			}
			return
		}
		if err != nil {
			t.Fatalf("make test-deps as root with apt-get = %v:\n%s", err, out)
		}
		if calls := read(log); !strings.Contains(calls, "apt-get update") || !strings.Contains(calls, "apt-get install -y -qq redis-server") {
			t.Errorf("apt-get calls = %q, want update then install redis-server", calls)
		}
		if _, err := os.Stat(filepath.Join(bin, "redis-server")); err != nil {
			t.Errorf("redis-server not installed: %v", err)
		}
	})

	t.Run("present", func(t *testing.T) {
		t.Parallel()
		bin := t.TempDir()
		log := filepath.Join(bin, "calls")
		fake(t, bin, "redis-server", "")
		fake(t, bin, "apt-get", "echo apt-get \"$@\" >> "+log+"\n")
		if out, err := run(t, bin, "test-deps"); err != nil || out != "" || read(log) != "" {
			t.Errorf("make test-deps with redis-server = %v, output %q, apt-get calls %q; want silence", err, out, read(log))
		}
	})
}
