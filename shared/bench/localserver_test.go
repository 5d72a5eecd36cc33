package bench_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// localServer is cmd/ocypod-local running as a child process, so that its
// CPU time is its own: the benchmark's HTTP clients, its Redis clients and
// redis-server are other processes.
type localServer struct {
	cmd  *exec.Cmd
	url  string // http://127.0.0.1:port
	done chan struct{}
}

// startLocalServer builds cmd/ocypod-local and starts it on a free port
// with only these settings from the environment: the Redis URL and the key
// namespace. Everything else is the local server's default, info-level
// logging included (its log goes to a pipe this process drains). It is
// stopped with SIGTERM when tb ends.
func startLocalServer(tb testing.TB, redisURL, namespace string) *localServer {
	tb.Helper()
	cmd := exec.Command(localServerBinary(tb))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OCYPOD_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "OCYPOD_PORT=0", "OCYPOD_REDIS_URL="+redisURL, "OCYPOD_KEY_NAMESPACE="+namespace)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	s := &localServer{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	var head strings.Builder // the log until the address, for a failure message
	go func() {
		defer close(s.done)
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			line := lines.Text()
			if _, rest, ok := strings.Cut(line, "Starting queue server at: "); ok {
				addr <- strings.Trim(strings.Fields(rest)[0], `"`)
				break
			}
			head.WriteString(line + "\n")
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
	}()
	tb.Cleanup(s.stop)
	select {
	case a := <-addr:
		s.url = "http://" + a
	case <-s.done:
		tb.Fatalf("ocypod-local exited before listening:\n%s", head.String())
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-s.done
		tb.Fatalf("ocypod-local did not listen within 30s:\n%s", head.String())
	}
	return s
}

// localBuild is cmd/ocypod-local built once per test binary (linking it
// takes seconds), in a directory removeLocalServerBinary deletes.
var localBuild struct {
	sync.Mutex
	dir, bin string
}

// localServerBinary builds cmd/ocypod-local on first use and returns its
// path.
func localServerBinary(tb testing.TB) string {
	tb.Helper()
	localBuild.Lock()
	defer localBuild.Unlock()
	if localBuild.bin != "" {
		return localBuild.bin
	}
	dir, err := os.MkdirTemp("", "ocyless-bench-")
	if err != nil {
		tb.Fatal(err)
	}
	bin := filepath.Join(dir, "ocypod-local")
	build := exec.Command("go", "build", "-o", bin, "./cmd/ocypod-local")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		tb.Fatalf("go build ./cmd/ocypod-local: %v\n%s", err, out)
	}
	localBuild.dir, localBuild.bin = dir, bin
	return bin
}

// removeLocalServerBinary deletes the build of localServerBinary, if any.
func removeLocalServerBinary() {
	localBuild.Lock()
	defer localBuild.Unlock()
	if localBuild.dir != "" {
		_ = os.RemoveAll(localBuild.dir)
		localBuild.dir, localBuild.bin = "", ""
	}
}

// stop shuts the server down gracefully, or kills it after 10 s.
func (s *localServer) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// clockTick is the unit of /proc/<pid>/stat's times: USER_HZ, 100 on
// every Linux architecture Go runs the benchmark on.
const clockTick = 10 * time.Millisecond

// cpu is the CPU time the server process has used so far, all its threads,
// user and system (utime + stime of /proc/<pid>/stat).
func (s *localServer) cpu() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields after it start
	// with the state (field 3), so utime and stime (14, 15) are at 11, 12.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, errors.New("unreadable /proc/<pid>/stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc/<pid>/stat")
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}
