// Package emf writes the Lambda sweepers' metrics as CloudWatch Embedded
// Metric Format: one JSON log line per invocation, from which CloudWatch
// Logs extracts the metrics. It makes no AWS call and needs no permission
// beyond writing logs.
//
// The line carries two metric directives in namespace "ocyless":
//
//   - OldestDueJobAgeSeconds (Seconds), dimension KeyNamespace: how long the
//     oldest overdue work has waited for a sweep, 0 when nothing is
//     overdue. template.yaml's OldestDueJobAlarm reads it.
//   - SweepDurationSeconds (Seconds) and SweptJobs (Count), dimensions
//     KeyNamespace and Sweep: how long the invocation swept and how many
//     jobs it changed.
//
// The breakdown of SweptJobs (batches, timed_out, retried, promoted,
// abandoned, expired, other) rides along as plain members: searchable
// with Logs Insights, but not billed as metrics.
package emf

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ocyless/ocyless/shared/sweep"
)

// Namespace is the CloudWatch namespace of every metric.
const Namespace = "ocyless"

// Metric and dimension names.
const (
	OldestDueJobAgeSeconds = "OldestDueJobAgeSeconds"
	SweepDurationSeconds   = "SweepDurationSeconds"
	SweptJobs              = "SweptJobs"
	DimKeyNamespace        = "KeyNamespace"
	DimSweep               = "Sweep"
)

// Sweep is what one sweeper invocation reports.
type Sweep struct {
	// Time is when the figures were taken (the metrics' timestamp).
	Time time.Time
	// Level is the line's "level". Lambda's log-level filter (JSON log
	// format) drops lines below the function's application log level and
	// counts a line without a level as INFO, so LineLevel gives the level
	// that keeps the line.
	Level     string
	RequestID string // "" when unknown
	// KeyNamespace is the dimension value: the key namespace in use
	// ("ocypod" when the configured one is empty).
	KeyNamespace string
	Kind         sweep.Kind
	Duration     time.Duration
	Totals       sweep.Totals
	// OldestDue is nil when it could not be read: the line then carries no
	// OldestDueJobAgeSeconds rather than a misleading 0.
	OldestDue *time.Duration
}

// LineLevel is the level of a metrics line for a function whose
// application log level (AWS_LAMBDA_LOG_LEVEL) is configured: INFO, or
// the configured level when it is stricter, so that the filter never
// drops the line.
func LineLevel(configured string) string {
	switch l := strings.ToUpper(configured); l {
	case "WARN", "ERROR", "FATAL":
		return l
	}
	return "INFO"
}

type document struct {
	Timestamp    string   `json:"timestamp"`
	Level        string   `json:"level"`
	Message      string   `json:"message"`
	RequestID    string   `json:"requestId,omitempty"`
	AWS          metadata `json:"_aws"`
	KeyNamespace string   `json:"KeyNamespace"`
	Sweep        string   `json:"Sweep"`
	OldestDue    *float64 `json:"OldestDueJobAgeSeconds,omitempty"`
	Duration     float64  `json:"SweepDurationSeconds"`
	SweptJobs    int      `json:"SweptJobs"`
	sweep.Totals
}

type metadata struct {
	Timestamp         int64       `json:"Timestamp"`
	CloudWatchMetrics []directive `json:"CloudWatchMetrics"`
}

type directive struct {
	Namespace  string     `json:"Namespace"`
	Dimensions [][]string `json:"Dimensions"`
	Metrics    []metric   `json:"Metrics"`
}

type metric struct {
	Name string `json:"Name"`
	Unit string `json:"Unit"`
}

// Line returns the EMF document of s as one JSON line, newline included.
func (s Sweep) Line() ([]byte, error) {
	t := s.Time.UTC()
	d := document{
		Timestamp:    t.Format(time.RFC3339Nano),
		Level:        LineLevel(s.Level),
		Message:      "sweep metrics",
		RequestID:    s.RequestID,
		KeyNamespace: s.KeyNamespace,
		Sweep:        string(s.Kind),
		Duration:     s.Duration.Seconds(),
		SweptJobs:    s.Totals.Jobs(),
		Totals:       s.Totals,
	}
	d.AWS.Timestamp = t.UnixMilli()
	if s.OldestDue != nil {
		age := max(s.OldestDue.Seconds(), 0)
		d.OldestDue = &age
		d.AWS.CloudWatchMetrics = append(d.AWS.CloudWatchMetrics, directive{
			Namespace:  Namespace,
			Dimensions: [][]string{{DimKeyNamespace}},
			Metrics:    []metric{{OldestDueJobAgeSeconds, "Seconds"}},
		})
	}
	d.AWS.CloudWatchMetrics = append(d.AWS.CloudWatchMetrics, directive{
		Namespace:  Namespace,
		Dimensions: [][]string{{DimKeyNamespace, DimSweep}},
		Metrics:    []metric{{SweepDurationSeconds, "Seconds"}, {SweptJobs, "Count"}},
	})
	line, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("emf: %w", err)
	}
	return append(line, '\n'), nil
}
