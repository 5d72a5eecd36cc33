package emf_test

import (
	"maps"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/metrics/emf"
	"github.com/ocyless/ocyless/shared/metrics/emf/emftest"
)

func TestDispatchLine(t *testing.T) {
	t.Parallel()
	d := emf.Dispatch{Time: time.Date(2026, 11, 25, 4, 0, 0, 0, time.UTC), Level: "debug", RequestID: "r",
		KeyNamespace: "prod", Duration: 2 * time.Second, Taken: 7, Delivered: 4, Failed: 2, TimedOut: 1}
	line, err := d.Line()
	if err != nil {
		t.Fatal(err)
	}
	got, root, err := emftest.Parse(line)
	if err != nil {
		t.Fatalf("%v\n%s", err, line)
	}
	want := map[string]float64{emf.PushDispatchSeconds: 2, emf.PushDeliveredJobs: 4, emf.PushFailedJobs: 3}
	if len(got) != len(want) {
		t.Errorf("%d metrics, want %d: %+v", len(got), len(want), got)
	}
	for _, m := range got {
		if v, ok := want[m.Name]; !ok || m.Namespace != emf.Namespace || len(m.Values) != 1 || m.Values[0] != v ||
			!maps.Equal(m.Dimensions, map[string]string{emf.DimKeyNamespace: "prod"}) {
			t.Errorf("metric %+v, want %s = %v with KeyNamespace prod", m, m.Name, v)
		}
	}
	if root["level"] != "INFO" || root["message"] != emf.DispatchMessage {
		t.Errorf("level %v message %v", root["level"], root["message"])
	}
}
