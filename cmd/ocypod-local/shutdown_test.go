package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// awaitArrival waits until the server has n requests for key
// ("GET /queue/q/job").
func (s *testServer) awaitArrival(t *testing.T, key string, n int) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		s.mu.Lock()
		got, wake := s.arrived[key], s.wake
		s.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-wake:
		case <-timeout:
			t.Fatalf("%s never reached the server\n%s", key, s.logs)
		}
	}
}

// TestShutdownEndsLongPolls: a shutdown answers the long-polls in flight at
// once (204) instead of waiting out their wait, and the server then stops
// well within shutdown_timeout.
func TestShutdownEndsLongPolls(t *testing.T) {
	t.Parallel()
	s := start(t, "[server]\nport = 0\nshutdown_timeout = \"30s\"\n\n[queue.q]\ntimeout = \"1m\"\n", nil)
	got := make(chan int, 2)
	for _, path := range []string{"/queue/q/job?wait=8s", "/job?queues=q&wait=8s"} {
		go func() {
			code, _ := s.doErr("GET", path, "")
			got <- code
		}()
	}
	s.awaitArrival(t, "GET /queue/q/job", 1)
	s.awaitArrival(t, "GET /job", 1)
	began := time.Now()
	if err := s.stop(t); err != nil {
		t.Fatalf("run = %v\n%s", err, s.logs)
	}
	for range 2 {
		if code := <-got; code != http.StatusNoContent {
			t.Errorf("a long-poll in flight at shutdown answered %d, want 204", code)
		}
	}
	if d := time.Since(began); d > 4*time.Second {
		t.Errorf("shutdown with long-polls in flight took %v; they wait 8s, shutdown_timeout is 30s", d)
	}
}

// TestSecondSignalForces: during a graceful shutdown held up by a request
// (a client that never sends its body), the force channel (main closes it
// on a second SIGINT or SIGTERM) stops the server at once.
func TestSecondSignalForces(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	force := make(chan struct{})
	addr := make(chan string, 1)
	arrived := make(chan struct{}, 1)
	done := make(chan error, 1)
	logs := &syncBuffer{}
	h := hooks{listening: func(a string) { addr <- a }, force: force,
		request: func(*http.Request) { arrived <- struct{}{} }}
	path := writeFile(t, "[server]\nport = 0\nshutdown_timeout = \"60s\"\n\n[queue.q]\ntimeout = \"1m\"\n")
	go func() { done <- runWith(ctx, []string{path}, envOf(nil), io.Discard, logs, h) }()
	var base string
	select {
	case base = <-addr:
	case err := <-done:
		t.Fatalf("run = %v\n%s", err, logs)
	}
	conn, err := net.Dial("tcp", base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Headers and the start of a body that never comes.
	if _, err := fmt.Fprintf(conn, "POST /queue/q/job HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", base); err != nil {
		t.Fatal(err)
	}
	<-arrived
	cancel() // the first signal: a graceful shutdown, which waits for the request
	select {
	case err := <-done:
		t.Fatalf("run returned %v while a request was still being served", err)
	default:
	}
	began := time.Now()
	close(force) // the second signal
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("run did not return after the second signal\n%s", logs)
	}
	if d := time.Since(began); d > 3*time.Second {
		t.Errorf("stopping after the second signal took %v", d)
	}
	if !strings.Contains(logs.String(), "Second signal: stopping now") {
		t.Errorf("no log line for the forced stop:\n%s", logs)
	}
}
