package emf_test

import (
	"encoding/json"
	"maps"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/metrics/emf"
	"github.com/ocyless/ocyless/shared/metrics/emf/emftest"
	"github.com/ocyless/ocyless/shared/sweep"
)

func TestLine(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 12, 0, 0, 250_000_000, time.FixedZone("CET", 3600))
	age := 90*time.Second + 500*time.Millisecond
	s := emf.Sweep{
		Time: at, Level: "error", RequestID: "req-1", KeyNamespace: "prod", Kind: sweep.Timeouts,
		Duration: 1500 * time.Millisecond, OldestDue: &age,
		Totals: sweep.Totals{Batches: 2, TimedOut: 3, Retried: 1, Other: 4},
	}
	line, err := s.Line()
	if err != nil {
		t.Fatal(err)
	}
	if line[len(line)-1] != '\n' {
		t.Errorf("line %q does not end with a newline", line)
	}
	got, root, err := emftest.Parse(line)
	if err != nil {
		t.Fatalf("%v\n%s", err, line)
	}
	type key struct{ name, unit string }
	want := map[key]struct {
		dims  map[string]string
		value float64
	}{
		{emf.OldestDueJobAgeSeconds, "Seconds"}: {map[string]string{"KeyNamespace": "prod"}, 90.5},
		{emf.SweepDurationSeconds, "Seconds"}:   {map[string]string{"KeyNamespace": "prod", "Sweep": "timeouts"}, 1.5},
		{emf.SweptJobs, "Count"}:                {map[string]string{"KeyNamespace": "prod", "Sweep": "timeouts"}, 8},
	}
	if len(got) != len(want) {
		t.Errorf("%d metrics extracted, want %d: %+v", len(got), len(want), got)
	}
	for _, m := range got {
		w, ok := want[key{m.Name, m.Unit}]
		if !ok || m.Namespace != "ocyless" || !maps.Equal(m.Dimensions, w.dims) || len(m.Values) != 1 || m.Values[0] != w.value {
			t.Errorf("metric %+v, want namespace ocyless, %+v", m, w)
		}
	}
	var ms int64
	if err := json.Unmarshal([]byte(root["_aws"].(map[string]any)["Timestamp"].(json.Number)), &ms); err != nil || ms != at.UnixMilli() {
		t.Errorf("_aws.Timestamp = %d, want %d", ms, at.UnixMilli())
	}
	if root["timestamp"] != "2026-11-21T11:00:00.25Z" || root["level"] != "ERROR" || root["requestId"] != "req-1" {
		t.Errorf("log fields timestamp %v level %v requestId %v", root["timestamp"], root["level"], root["requestId"])
	}
	for k, v := range map[string]string{"batches": "2", "timed_out": "3", "retried": "1", "promoted": "0", "abandoned": "0", "expired": "0", "other": "4"} {
		if n, ok := root[k].(json.Number); !ok || n.String() != v {
			t.Errorf("member %s = %v, want %s", k, root[k], v)
		}
	}
}

// TestLineWithoutOldestDue: an age that could not be read is left out,
// not reported as 0, and the line stays valid.
func TestLineWithoutOldestDue(t *testing.T) {
	t.Parallel()
	s := emf.Sweep{Time: time.Unix(1_800_000_000, 0), KeyNamespace: "ocypod", Kind: sweep.Expiry}
	line, err := s.Line()
	if err != nil {
		t.Fatal(err)
	}
	got, root, err := emftest.Parse(line)
	if err != nil {
		t.Fatalf("%v\n%s", err, line)
	}
	if _, ok := root[emf.OldestDueJobAgeSeconds]; ok {
		t.Errorf("line has %s: %s", emf.OldestDueJobAgeSeconds, line)
	}
	names := map[string]bool{}
	for _, m := range got {
		names[m.Name] = true
	}
	if len(got) != 2 || !names[emf.SweepDurationSeconds] || !names[emf.SweptJobs] {
		t.Errorf("metrics %+v, want SweepDurationSeconds and SweptJobs", got)
	}
	if root["level"] != "INFO" {
		t.Errorf("level %v, want INFO", root["level"])
	}
}

// TestLineZeroAge: nothing overdue is reported as 0, every run.
func TestLineZeroAge(t *testing.T) {
	t.Parallel()
	var zero time.Duration
	line, err := emf.Sweep{Time: time.Unix(1_800_000_000, 0), KeyNamespace: "ocypod", Kind: sweep.Retries, OldestDue: &zero}.Line()
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := emftest.Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range got {
		if m.Name == emf.OldestDueJobAgeSeconds {
			found = m.Values[0] == 0 && m.Dimensions["KeyNamespace"] == "ocypod" && len(m.Dimensions) == 1
		}
	}
	if !found {
		t.Errorf("no OldestDueJobAgeSeconds 0 with dimension KeyNamespace=ocypod in %s", line)
	}
}

func TestLineLevel(t *testing.T) {
	t.Parallel()
	for configured, want := range map[string]string{
		"": "INFO", "TRACE": "INFO", "DEBUG": "INFO", "INFO": "INFO", "info": "INFO",
		"WARN": "WARN", "warn": "WARN", "ERROR": "ERROR", "FATAL": "FATAL", "bogus": "INFO",
	} {
		if got := emf.LineLevel(configured); got != want {
			t.Errorf("LineLevel(%q) = %q, want %q", configured, got, want)
		}
	}
}
