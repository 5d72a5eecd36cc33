package deploytest

import (
	"bytes"
	"context"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// Process is a bootstrap binary running against its own fake Runtime API.
type Process struct {
	name    string
	rt      *Runtime
	cmd     *exec.Cmd
	out     lockedBuffer
	exited  chan struct{}
	err     error // Wait's result, once exited is closed
	started time.Time
	stop    sync.Once
}

// Start runs the executable bin against a new Runtime, with env plus
// AWS_LAMBDA_RUNTIME_API and, unless env sets it, AWS_LAMBDA_FUNCTION_NAME. The process is killed
// when the test ends, and its output is logged if the test failed.
func Start(tb testing.TB, name, bin string, env []string) *Process {
	tb.Helper()
	p := &Process{name: name, rt: NewRuntime(tb), exited: make(chan struct{})}
	p.cmd = exec.Command(bin)
	// exec keeps the last of duplicate variables.
	p.cmd.Env = append(append([]string{"AWS_LAMBDA_FUNCTION_NAME=ocyless-" + name}, env...),
		"AWS_LAMBDA_RUNTIME_API="+p.rt.Addr())
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		tb.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	tb.Cleanup(func() {
		p.Stop()
		if tb.Failed() {
			tb.Logf("output of %s:\n%s", name, p.out.String())
		}
	})
	return p
}

// Runtime is the fake Runtime API the process talks to.
func (p *Process) Runtime() *Runtime { return p.rt }

// Invoke hands payload to the process (see Runtime.Invoke); it fails at
// once if the process exits instead of answering.
func (p *Process) Invoke(ctx context.Context, payload []byte, timeout time.Duration) (Result, error) {
	return p.rt.invoke(ctx, payload, timeout, p.exited)
}

// Started is when the process was started.
func (p *Process) Started() time.Time { return p.started }

// InitDuration is the time from starting the process to its first request
// for an event (zero if it has not asked yet).
func (p *Process) InitDuration() time.Duration {
	first := p.rt.FirstNext()
	if first.IsZero() {
		return 0
	}
	return first.Sub(p.started)
}

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Err is the process's exit error; valid once Exited is closed.
func (p *Process) Err() error {
	<-p.exited
	return p.err
}

// Running reports whether the process is still alive.
func (p *Process) Running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Output is everything the process wrote to stdout and stderr so far.
func (p *Process) Output() string { return p.out.String() }

// Stop kills the process, waits for it to exit and closes its Runtime. It
// may be called more than once.
func (p *Process) Stop() {
	p.stop.Do(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
		p.rt.srv.Close()
	})
}

// lockedBuffer collects a process's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
