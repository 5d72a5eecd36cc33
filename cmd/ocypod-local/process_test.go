package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildServer builds this command into a directory of the test's own.
func buildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ocypod-local")
	out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// cleanEnv is the test's environment without OCYPOD_* and make's variables,
// plus extra ("NAME=value").
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "OCYPOD_") || name == "MAKEFLAGS" || name == "MFLAGS" || name == "MAKELEVEL" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

var startedRE = regexp.MustCompile(`Starting queue server at: (\S+?)"`)

// process is a command started with its output collected, whose server
// address was read from its log.
type process struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	addr string
	done chan struct{} // closed when the command has exited
}

// startProcess starts cmd in a process group of its own and waits for the
// server's "Starting queue server at" line. The group is killed when the
// test ends, so that a failing test leaves nothing running.
func startProcess(t *testing.T, cmd *exec.Cmd) *process {
	t.Helper()
	p := &process{cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A server left behind by its parent would hold the output pipe open.
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd, err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			line := sc.Text()
			_, _ = p.out.Write([]byte(line + "\n"))
			if m := startedRE.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, r)
	}()
	go func() {
		_ = cmd.Wait()
		_ = w.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	})
	select {
	case p.addr = <-addr:
	case <-p.done:
		t.Fatalf("%s exited before listening:\n%s", cmd, p.out)
	case <-time.After(3 * time.Minute): // make run builds first
		t.Fatalf("%s did not start listening:\n%s", cmd, p.out)
	}
	return p
}

// server is a testServer view of the process, for its request helpers.
func (p *process) server() *testServer {
	return &testServer{base: "http://" + p.addr, logs: p.out}
}

// wait waits for the process to exit after a signal and returns its status.
func (p *process) wait(t *testing.T) syscall.WaitStatus {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		t.Fatalf("%s did not exit:\n%s", p.cmd, p.out)
	}
	return p.cmd.ProcessState.Sys().(syscall.WaitStatus)
}

// listeners lists the listening sockets of process pid as "tcp <port>" or
// "unix <path>", from /proc: the socket inodes among its descriptors,
// matched against the kernel's socket tables.
func listeners(pid int) ([]string, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	var found []string
	for _, table := range []string{"tcp", "tcp6"} {
		rows, err := procTable(pid, table)
		if err != nil {
			return nil, err
		}
		for _, f := range rows {
			// sl local_address rem_address st ... inode: state 0A is LISTEN.
			if len(f) > 9 && f[3] == "0A" && inodes[f[9]] {
				_, hexPort, _ := strings.Cut(f[1], ":")
				port, _ := strconv.ParseUint(hexPort, 16, 16)
				found = append(found, fmt.Sprintf("tcp %d", port))
			}
		}
	}
	rows, err := procTable(pid, "unix")
	if err != nil {
		return nil, err
	}
	for _, f := range rows {
		// Num RefCount Protocol Flags Type St Inode [Path]: flag 0x10000
		// (__SO_ACCEPTCON) marks a listening socket.
		if len(f) > 6 && inodes[f[6]] {
			flags, _ := strconv.ParseUint(f[3], 16, 32)
			if flags&0x10000 != 0 {
				found = append(found, "unix "+strings.Join(f[7:], " "))
			}
		}
	}
	return found, nil
}

// procTable reads /proc/<pid>/net/<name> without its header line.
func procTable(pid int, name string) ([][]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, name))
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	rows := make([][]string, 0, len(lines))
	for _, l := range lines[1:] {
		rows = append(rows, strings.Fields(l))
	}
	return rows, nil
}

// TestEmbeddedRedisUnreachable runs the real binary with the embedded
// Redis and checks that no other process can reach its data: the HTTP port
// is its only listening socket, and that port does not speak Redis.
func TestEmbeddedRedisUnreachable(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("SKIPPED LOUDLY: listening sockets are read from /proc, which only Linux has; CI runs on Linux")
	}
	bin := buildServer(t)
	cmd := exec.CommandContext(t.Context(), bin)
	cmd.Env = cleanEnv("OCYPOD_PORT=0", "OCYPOD_LOG_LEVEL=debug")
	p := startProcess(t, cmd)
	s := p.server()
	s.want(t, "PUT", "/queue/private", `{}`, 201, "")
	s.want(t, "POST", "/queue/private/job", `{"input":"only through the API"}`, 201, "*")

	got, err := listeners(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(p.addr)
	if len(got) != 1 || got[0] != "tcp "+port {
		t.Errorf("listening sockets of the server = %q, want only its HTTP port [tcp %s]", got, port)
	}
	for _, l := range got {
		if !strings.HasPrefix(l, "tcp ") {
			continue
		}
		conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strings.TrimPrefix(l, "tcp ")), 5*time.Second)
		if err != nil {
			continue
		}
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = conn.Write([]byte("*2\r\n$4\r\nKEYS\r\n$1\r\n*\r\n*1\r\n$4\r\nPING\r\n"))
		reply, _ := io.ReadAll(io.LimitReader(conn, 4096))
		_ = conn.Close()
		if strings.Contains(string(reply), "PONG") || strings.Contains(string(reply), "job") {
			t.Errorf("%s answers Redis commands: %q", l, reply)
		}
	}
	if strings.Contains(p.out.String(), "addr=127.0.0.1:") {
		t.Errorf("the log names a Redis address:\n%s", p.out)
	}
}

// TestEmbeddedMemoryBound fills a server with a small embedded_max_memory:
// creating jobs and writing outputs answer 507 naming the setting, while
// reads, takes, status changes and deletes keep working, the process stays
// up, and once jobs are deleted creating works again.
func TestEmbeddedMemoryBound(t *testing.T) {
	t.Parallel()
	bin := buildServer(t)
	cmd := exec.CommandContext(t.Context(), bin)
	cmd.Env = cleanEnv("OCYPOD_PORT=0", "OCYPOD_EMBEDDED_MAX_MEMORY=16MiB")
	p := startProcess(t, cmd)
	s := p.server()
	s.want(t, "PUT", "/queue/big", `{}`, 201, "")

	payload := `{"input":"` + strings.Repeat("x", 200<<10) + `"}`
	var ids []string
	full := ""
	for range 1000 { // 16 MiB is about 80 such jobs
		code, body, h := s.send(t, "POST", "/queue/big/job", payload, nil)
		if code == 201 {
			ids = append(ids, body)
			continue
		}
		if code != 507 || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("POST job %d = %d %q %v, want 201 or a nosniff 507\n%s", len(ids)+1, code, body, h, p.out)
		}
		full = body
		break
	}
	if full == "" || len(ids) < 10 {
		t.Fatalf("after %d jobs of 200 KiB: last 507 body %q; want a 507 after at least 10 jobs", len(ids), full)
	}
	if !strings.Contains(full, "redis.embedded_max_memory (OCYPOD_EMBEDDED_MAX_MEMORY) = 16MiB") {
		t.Errorf("507 body %q does not name the setting", full)
	}
	t.Logf("507 after %d jobs of 200 KiB", len(ids))

	// Full: reads, takes and status changes still work; new data does not.
	s.want(t, "GET", "/queue/big/size", "", 200, strconv.Itoa(len(ids)))
	s.want(t, "GET", "/job/"+ids[0]+"?fields=status", "", 200, `{"status":"queued"}`)
	s.want(t, "GET", "/info", "", 200, "*")
	s.want(t, "GET", "/queue/big/job", "", 200, "*")
	s.want(t, "PUT", "/job/"+ids[0]+"/heartbeat", "", 204, "")
	s.want(t, "PUT", "/job/"+ids[0]+"/output", `{"progress":"`+strings.Repeat("y", 100<<10)+`"}`, 507, full)
	s.want(t, "PATCH", "/job/"+ids[0], `{"status":"completed"}`, 204, "")
	s.want(t, "PUT", "/queue/other", `{}`, 201, "")
	s.want(t, "POST", "/queue/big/job", `{"input":1}`, 507, full)

	for _, id := range ids {
		s.want(t, "DELETE", "/job/"+id, "", 204, "")
	}
	deadline := time.Now().Add(10 * time.Second) // the full verdict stands for fullRecheck
	for {
		code, body, _ := s.send(t, "POST", "/queue/big/job", payload, nil)
		if code == 201 {
			break
		}
		if code != 507 || time.Now().After(deadline) {
			t.Fatalf("POST after deleting every job = %d %q, want 201 within 10s\n%s", code, body, p.out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.want(t, "GET", "/health", "", 200, `{"status":"healthy"}`)
	_ = syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
	if ws := p.wait(t); !ws.Exited() || ws.ExitStatus() != 0 {
		t.Errorf("server exit status %v after SIGTERM, want 0\n%s", ws, p.out)
	}
}
