package client

import (
	"encoding/json"
	"testing"
	"time"
)

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0:                                  "0s",
		90 * time.Second:                   "1m 30s",
		1500 * time.Millisecond:            "1s 500ms",
		36 * time.Hour:                     "1day 12h",
		time.Microsecond + time.Nanosecond: "1us 1ns",
	} {
		if got, err := formatDuration(d); got != want || err != nil {
			t.Errorf("formatDuration(%s) = %q, %v; want %q", d, got, err, want)
		}
	}
	if _, err := formatDuration(-time.Second); err == nil {
		t.Error("formatDuration(-1s) accepted")
	}
	var d duration
	if err := json.Unmarshal([]byte(`"14days 10h 17m 36s"`), &d); err != nil || time.Duration(d) != 14*24*time.Hour+10*time.Hour+17*time.Minute+36*time.Second {
		t.Errorf("reading \"14days 10h 17m 36s\" = %s, %v", time.Duration(d), err)
	}
	if err := json.Unmarshal([]byte(`"soon"`), &d); err == nil {
		t.Error("a bad duration was read")
	}
}

// TestBodies checks the JSON each request body is written as: the
// server's field names and order, absent fields left out.
func TestBodies(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	for name, tc := range map[string]struct {
		got  func() ([]byte, error)
		want string
	}{
		"empty job": {JobSpec{}.MarshalJSON, `{}`},
		"full job": {JobSpec{Input: json.RawMessage(`{"a":1}`), Tags: []string{}, Timeout: new(time.Duration(0)),
			HeartbeatTimeout: new(time.Minute), ExpiresAfter: new(time.Hour), Retries: new(uint64(0)),
			RetryDelays: []time.Duration{}, Priority: -3, RunAt: at, Key: "k", OnConflict: OnConflictUpdate,
			UpdateRunAt: UpdateRunAtIfLater, DependsOn: []uint64{1, 2}, TimeoutRetries: new(uint64(4)), Tracked: true}.MarshalJSON,
			`{"input":{"a":1},"tags":[],"timeout":"0s","heartbeat_timeout":"1m","expires_after":"1h","retries":0,` +
				`"retry_delays":[],"priority":-3,"run_at":"2030-01-02T02:04:05Z","key":"k","on_conflict":"update",` +
				`"update_run_at":"if_later","depends_on":[1,2],"timeout_retries":4,"tracked":true}`},
		"backoff": {JobSpec{Delay: 90 * time.Second, RetryBackoff: &Backoff{Min: time.Second, Max: time.Hour}}.MarshalJSON,
			`{"delay":"1m 30s","retry_backoff":{"min":"1s","max":"1h","jitter":true}}`},
		"failure": {(&JobUpdate{Status: StatusFailed, Error: &JobError{Message: "m"}, NoRetry: true}).marshal,
			`{"status":"failed","error":{"message":"m"},"retry":false}`},
		"retry now": {(&JobUpdate{Status: StatusFailed, RetryInSet: true}).marshal, `{"status":"failed","retry_in":"0s"}`},
		"pending change": {(&JobUpdate{Priority: new(int64(0)), RunAt: at, DependsOn: []uint64{}, Tags: []string{"t"},
			Tracked: new(false)}).marshal,
			`{"priority":0,"run_at":"2030-01-02T02:04:05Z","depends_on":[],"tags":["t"],"tracked":false}`},
		"next": {(&JobUpdate{Status: StatusCompleted, Output: 1, Next: &NextJob{Queue: "n", JobSpec: JobSpec{Input: "x"}}}).marshal,
			`{"status":"completed","output":1,"next":{"queue":"n","input":"x"}}`},
		"queue patch": {(&QueuePatch{Timeout: new(time.Minute), RetryDelays: []time.Duration{time.Second}, Paused: new(true),
			ClearRateLimit: true, RetryBackoff: &Backoff{Min: time.Second, Max: time.Minute, Factor: 1.5, NoJitter: true},
			ClearTimeoutRetries: true, DeadLetterQueue: "d", Shards: 2}).marshal,
			`{"timeout":"1m","retry_delays":["1s"],"paused":true,"rate_limit":null,` +
				`"retry_backoff":{"min":"1s","max":"1m","factor":1.5,"jitter":false},"timeout_retries":null,` +
				`"dead_letter_queue":"d","shards":2}`},
	} {
		b, err := tc.got()
		if err != nil || string(b) != tc.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", name, b, err, tc.want)
		}
	}
	if _, err := (JobSpec{Input: json.RawMessage(`{`)}).MarshalJSON(); err == nil {
		t.Error("an invalid json.RawMessage input was accepted")
	}
	if _, err := (JobSpec{Input: make(chan int)}).MarshalJSON(); err == nil {
		t.Error("an input encoding/json cannot write was accepted")
	}
	if _, err := (JobSpec{Delay: -time.Second}).MarshalJSON(); err == nil {
		t.Error("a negative delay was accepted")
	}
}

func TestErrorText(t *testing.T) {
	t.Parallel()
	e := &Error{StatusCode: 404, Message: "Job with ID 7 does not exist", Method: "GET", Path: "/job/7"}
	if got := e.Error(); got != "ocyless: GET /job/7: 404 Not Found: Job with ID 7 does not exist" {
		t.Errorf("Error() = %q", got)
	}
	e = &Error{StatusCode: 404, Method: "DELETE", Path: "/job/7"}
	if got := e.Error(); got != "ocyless: DELETE /job/7: 404 Not Found" {
		t.Errorf("Error() without a message = %q", got)
	}
}
