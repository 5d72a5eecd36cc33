package redisstore

import (
	"errors"
	"io"
	"slices"
	"testing"

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
