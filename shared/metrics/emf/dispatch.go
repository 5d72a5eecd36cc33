package emf

import (
	"encoding/json"
	"fmt"
	"time"
)

// Metric names of the push dispatcher's line (namespace "ocyless",
// dimension KeyNamespace). template.yaml's PushFailuresAlarm reads
// PushFailedJobs.
const (
	PushDeliveredJobs      = "PushDeliveredJobs"     // jobs completed by their target
	PushFailedJobs         = "PushFailedJobs"        // attempts failed or timed out in delivery
	PushDispatchSeconds    = "PushDispatchSeconds"   // how long the invocation dispatched
	DispatchMessage        = "push dispatch metrics" // the line's message
	dispatchDirectiveUnits = "Count"
)

// Dispatch is what one push dispatcher invocation reports.
type Dispatch struct {
	Time         time.Time
	Level        string // as Sweep.Level
	RequestID    string
	KeyNamespace string
	Duration     time.Duration
	// Taken is how many jobs the invocation took; Delivered, Failed and
	// TimedOut how many outcomes it recorded.
	Taken, Delivered, Failed, TimedOut int
}

type dispatchDocument struct {
	Timestamp    string   `json:"timestamp"`
	Level        string   `json:"level"`
	Message      string   `json:"message"`
	RequestID    string   `json:"requestId,omitempty"`
	AWS          metadata `json:"_aws"`
	KeyNamespace string   `json:"KeyNamespace"`
	Duration     float64  `json:"PushDispatchSeconds"`
	Delivered    int      `json:"PushDeliveredJobs"`
	FailedJobs   int      `json:"PushFailedJobs"`
	Taken        int      `json:"taken"`
	Failed       int      `json:"failed"`
	TimedOut     int      `json:"timed_out"`
}

// Line returns the EMF document of d as one JSON line, newline included.
// PushFailedJobs counts failed and timed-out attempts together; the
// breakdown rides along as plain members.
func (d Dispatch) Line() ([]byte, error) {
	t := d.Time.UTC()
	doc := dispatchDocument{
		Timestamp:    t.Format(time.RFC3339Nano),
		Level:        LineLevel(d.Level),
		Message:      DispatchMessage,
		RequestID:    d.RequestID,
		KeyNamespace: d.KeyNamespace,
		Duration:     d.Duration.Seconds(),
		Delivered:    d.Delivered,
		FailedJobs:   d.Failed + d.TimedOut,
		Taken:        d.Taken,
		Failed:       d.Failed,
		TimedOut:     d.TimedOut,
	}
	doc.AWS.Timestamp = t.UnixMilli()
	doc.AWS.CloudWatchMetrics = []directive{{
		Namespace:  Namespace,
		Dimensions: [][]string{{DimKeyNamespace}},
		Metrics: []metric{{PushDispatchSeconds, "Seconds"}, {PushDeliveredJobs, dispatchDirectiveUnits},
			{PushFailedJobs, dispatchDirectiveUnits}},
	}}
	line, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("emf: %w", err)
	}
	return append(line, '\n'), nil
}
