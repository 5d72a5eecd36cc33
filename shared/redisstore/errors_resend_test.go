package redisstore

import (
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// TestClusterNoResend: a cluster node that closes the connection once it
// has read a command gets each command once. go-redis's cluster client
// would send it again (a script run twice: two jobs, one answer); the store
// answers 503 instead, which the README says may have been applied.
func TestClusterNoResend(t *testing.T) {
	t.Parallel()
	f := startFakeNode(t, "", true)
	s := storeAt(t, ClientOptions{URL: "redis://" + f.addr(), ClusterMode: true})
	err := createJob(t, s)
	if ocypod.ErrorKind(err) != ocypod.KindUnavailable || ocypod.ErrorMessage(err) != "Failed to connect to Redis: connection failed" || !errors.Is(err, io.EOF) {
		t.Fatalf("CreateJob = %v, want 503 connection failed, caused by EOF", err)
	}
	_, err = s.JobStatus(t.Context(), 1)
	if ocypod.ErrorKind(err) != ocypod.KindUnavailable {
		t.Fatalf("JobStatus = %v, want 503", err)
	}
	got := f.received()
	count := func(names ...string) int {
		return len(slices.DeleteFunc(slices.Clone(got), func(c string) bool { return !slices.Contains(names, c) }))
	}
	// The script went once, as FCALL or EVALSHA; the read once.
	if n := count("FCALL", "EVALSHA"); n != 1 {
		t.Errorf("the node got the script %d times (%v), want once", n, got)
	}
	if n := count("HGET"); n != 1 {
		t.Errorf("the node got HGET %d times (%v), want once", n, got)
	}
}

// TestClusterNoResendPipelined: the same for the script calls the store
// pipelines itself (one per partition, as /info's): a cluster pipeline
// would send a broken connection's commands again, up to MaxRedirects
// times.
func TestClusterNoResendPipelined(t *testing.T) {
	t.Parallel()
	f := startFakeNode(t, "", true)
	rdb, err := NewClient(ClientOptions{URL: "redis://" + f.addr(), ClusterMode: true, ReadTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	s, err := New(rdb, Options{Namespace: "errs", Partitions: 2, Scripts: "functions"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Info(t.Context())
	if ocypod.ErrorKind(err) != ocypod.KindUnavailable {
		t.Fatalf("Info = %v, want 503", err)
	}
	n := 0
	for _, c := range f.received() {
		if c == "FCALL" {
			n++
		}
	}
	if n > 2 {
		t.Errorf("the node got %d script calls (%v), want one per partition at most", n, f.received())
	}
}
