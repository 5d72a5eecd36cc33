package ocypod

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestTransitionTable(t *testing.T) {
	t.Parallel()
	// Rows: current status; the set of requested statuses that are allowed
	// (reference §3.1). Everything else must be refused.
	allowed := map[Status][]Status{
		StatusQueued:    {StatusCancelled},
		StatusRunning:   {StatusCompleted, StatusFailed, StatusTimedOut, StatusCancelled},
		StatusFailed:    {StatusQueued, StatusCancelled},
		StatusTimedOut:  {StatusQueued},
		StatusCancelled: {StatusQueued},
		StatusCompleted: {},
	}
	for _, from := range Statuses {
		for _, to := range Statuses {
			want := false
			for _, a := range allowed[from] {
				want = want || a == to
			}
			if got := CanTransition(from, to); got != want {
				t.Errorf("CanTransition(%s, %s) = %v, want %v", from, to, got, want)
			}
		}
	}
	if got, want := AllowedFrom(StatusCancelled), []Status{StatusQueued, StatusRunning, StatusFailed, StatusScheduled, StatusWaiting}; !reflect.DeepEqual(got, want) {
		t.Errorf("AllowedFrom(cancelled) = %v, want %v", got, want)
	}
	if got, want := AllowedFrom(StatusQueued), []Status{StatusFailed, StatusCancelled, StatusTimedOut}; !reflect.DeepEqual(got, want) {
		t.Errorf("AllowedFrom(queued) = %v, want %v", got, want)
	}
	if got := AllowedFrom(StatusRunning); len(got) != 0 {
		t.Errorf("AllowedFrom(running) = %v, want none", got)
	}
}

func TestParseStatus(t *testing.T) {
	t.Parallel()
	for _, s := range Statuses {
		if got, ok := ParseStatus(string(s)); !ok || got != s {
			t.Errorf("ParseStatus(%q) = %q, %v", s, got, ok)
		}
	}
	for _, bad := range []string{"", "Queued", "created", "timed-out", "done"} {
		if _, ok := ParseStatus(bad); ok {
			t.Errorf("ParseStatus(%q) accepted", bad)
		}
	}
}

func TestIsEnded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status             Status
		retries, attempted uint64
		abandoned, want    bool
	}{
		{StatusQueued, 0, 0, false, false},
		{StatusRunning, 0, 0, false, false},
		{StatusCompleted, 3, 0, false, true},
		{StatusCancelled, 3, 0, false, true},
		{StatusFailed, 0, 0, false, true},
		{StatusFailed, 2, 1, false, false},
		{StatusFailed, 2, 2, false, true},
		{StatusTimedOut, 2, 3, false, true},
		{StatusTimedOut, 2, 0, false, false},
		{StatusFailed, 2, 0, true, true},
	}
	for _, tt := range tests {
		if got := IsEnded(tt.status, tt.retries, tt.attempted, tt.abandoned); got != tt.want {
			t.Errorf("IsEnded(%s, %d, %d, %v) = %v, want %v", tt.status, tt.retries, tt.attempted, tt.abandoned, got, tt.want)
		}
	}
}

func TestValidQueueName(t *testing.T) {
	t.Parallel()
	// Upstream unit-test vectors (§2.1).
	for _, ok := range []string{"name", "1", "a", "abc-123-ABC", "123_456", "name.1.low", "_", ".", "-"} {
		if !ValidQueueName(ok) {
			t.Errorf("ValidQueueName(%q) = false", ok)
		}
	}
	for _, bad := range []string{"", "   ", ":", "name ", " name", "name/name", "x'y", "⨀⨁⨂", "nâme", "{ocypod}", strings.Repeat("a", MaxNameLength+1)} {
		if ValidQueueName(bad) {
			t.Errorf("ValidQueueName(%q) = true", bad)
		}
	}
}

func TestFormatTime(t *testing.T) {
	t.Parallel()
	base := time.Date(2024, 3, 1, 15, 34, 45, 0, time.FixedZone("x", 3600))
	tests := map[int]string{
		0:           "2024-03-01T14:34:45Z",
		123_000_000: "2024-03-01T14:34:45.123Z",
		123_456_000: "2024-03-01T14:34:45.123456Z",
		123_456_789: "2024-03-01T14:34:45.123456789Z",
		100_000:     "2024-03-01T14:34:45.000100Z",
	}
	for ns, want := range tests {
		if got := FormatTime(base.Add(time.Duration(ns))); got != want {
			t.Errorf("FormatTime(+%dns) = %q, want %q", ns, got, want)
		}
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		kind Kind
		msg  string
	}{
		{JobNotFound(42), KindNotFound, "Job with ID 42 does not exist"},
		{QueueNotFound("q"), KindNotFound, "Queue 'q' does not exist"},
		{InvalidQueueName(), KindInvalid, "Invalid queue name, valid characters: a-zA-Z0-9_.-"},
		{EmptyTag(), KindInvalid, "tags cannot be empty"},
		{TransitionConflict(StatusCompleted, StatusQueued), KindConflict, "Cannot change status from completed to queued"},
		{OutputNotRunning(), KindConflict, "Can only set output for running jobs"},
		{HeartbeatNotRunning(7), KindConflict, "Cannot heartbeat job 7, job is not running"},
		{fmt.Errorf("wrapped: %w", JobNotFound(1)), KindNotFound, "Job with ID 1 does not exist"},
		{errors.New("raw redis text"), KindInternal, "Internal server error"},
		{Internal(errors.New("secret detail")), KindInternal, "Internal server error"},
	}
	for _, tt := range tests {
		if got := ErrorKind(tt.err); got != tt.kind {
			t.Errorf("ErrorKind(%v) = %v, want %v", tt.err, got, tt.kind)
		}
		if got := ErrorMessage(tt.err); got != tt.msg {
			t.Errorf("ErrorMessage(%v) = %q, want %q", tt.err, got, tt.msg)
		}
	}
	cause := errors.New("dial redis://admin:hunter2@cache:6379: connection refused")
	u := Unavailable(cause)
	if !errors.Is(u, cause) || ErrorKind(u) != KindUnavailable {
		t.Fatalf("Unavailable does not wrap its cause: %v", u)
	}
	if strings.Contains(ErrorMessage(u), "hunter2") || !strings.HasPrefix(ErrorMessage(u), "Failed to connect to Redis: ") {
		t.Fatalf("Unavailable message = %q", ErrorMessage(u))
	}
}

func TestRedactSecrets(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"redis://user:pw@host:6379/0": "redis://REDACTED@host:6379/0",
		"rediss://:tok@h":             "rediss://REDACTED@h",
		"no secret here":              "no secret here",
		"my-cache/?Action=connect&User=u&X-Amz-Signature=abc123&X-Amz-Security-Token=zzz": "my-cache/?Action=connect&User=u&X-Amz-Signature=REDACTED&X-Amz-Security-Token=REDACTED",
	}
	for in, want := range tests {
		if got := RedactSecrets(in); got != want {
			t.Errorf("RedactSecrets(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestJobSpecValidate(t *testing.T) {
	t.Parallel()
	if err := (&JobSpec{Tags: []string{"a", ""}}).Validate(); ErrorMessage(err) != "tags cannot be empty" {
		t.Errorf("empty tag: %v", err)
	}
	if err := (&JobSpec{Tags: []string{"a", "b c", "ünï"}}).Validate(); err != nil {
		t.Errorf("valid tags refused: %v", err)
	}
	if err := (&JobSpec{Tags: []string{strings.Repeat("t", MaxNameLength+1)}}).Validate(); ErrorKind(err) != KindInvalid {
		t.Errorf("long tag: %v", err)
	}
}
