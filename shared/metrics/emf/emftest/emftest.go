// Package emftest checks log lines against the structure the CloudWatch
// Embedded Metric Format specification defines, so that tests catch a
// line CloudWatch Logs would store but extract no metric from. Import it
// only from _test.go files.
package emftest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Units are the units a MetricDefinition may name.
var Units = []string{
	"Seconds", "Microseconds", "Milliseconds",
	"Bytes", "Kilobytes", "Megabytes", "Gigabytes", "Terabytes",
	"Bits", "Kilobits", "Megabits", "Gigabits", "Terabits",
	"Percent", "Count",
	"Bytes/Second", "Kilobytes/Second", "Megabytes/Second", "Gigabytes/Second", "Terabytes/Second",
	"Bits/Second", "Kilobits/Second", "Megabits/Second", "Gigabits/Second", "Terabits/Second",
	"Count/Second", "None",
}

// Limits of the specification and of CloudWatch.
const (
	maxEventBytes     = 1 << 20 // a CloudWatch Logs event
	maxDimensions     = 30      // per dimension set
	maxMetrics        = 100     // per directive
	maxValues         = 100     // per metric value array
	maxNameLen        = 255     // metric and dimension names
	maxDimensionValue = 1024
)

// Metric is one metric extracted from a document.
type Metric struct {
	Namespace  string
	Name, Unit string
	// Dimensions are the dimension names and values of one dimension set.
	Dimensions map[string]string
	Values     []float64
}

// Parse checks that line (one JSON object, optionally followed by a
// newline) is a valid EMF document and returns the metrics CloudWatch
// would extract from it: one per metric per dimension set. It also
// returns the document's root members.
func Parse(line []byte) ([]Metric, map[string]any, error) {
	if len(line) > maxEventBytes {
		return nil, nil, fmt.Errorf("document of %d bytes, over the %d-byte log event limit", len(line), maxEventBytes)
	}
	body := bytes.TrimSuffix(line, []byte("\n"))
	if bytes.ContainsAny(body, "\n") {
		return nil, nil, errors.New("more than one line")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		return nil, nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if dec.More() || dec.InputOffset() != int64(len(body)) {
		return nil, nil, errors.New("data after the JSON object")
	}
	aws, ok := root["_aws"].(map[string]any)
	if !ok {
		return nil, nil, errors.New(`no "_aws" object`)
	}
	ts, ok := aws["Timestamp"].(json.Number)
	if !ok {
		return nil, nil, errors.New(`"_aws.Timestamp" is not a number`)
	}
	if ms, err := ts.Int64(); err != nil || ms <= 0 {
		return nil, nil, fmt.Errorf(`"_aws.Timestamp" %s is not milliseconds since the epoch`, ts)
	}
	directives, ok := aws["CloudWatchMetrics"].([]any)
	if !ok {
		return nil, nil, errors.New(`"_aws.CloudWatchMetrics" is not an array`)
	}
	var out []Metric
	for i, d := range directives {
		ms, err := directive(root, d)
		if err != nil {
			return nil, nil, fmt.Errorf("CloudWatchMetrics[%d]: %w", i, err)
		}
		out = append(out, ms...)
	}
	return out, root, nil
}

func directive(root map[string]any, v any) ([]Metric, error) {
	d, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not an object")
	}
	for k := range d {
		if k != "Namespace" && k != "Dimensions" && k != "Metrics" {
			return nil, fmt.Errorf("member %q is not part of a MetricDirective", k)
		}
	}
	ns, ok := d["Namespace"].(string)
	if !ok || ns == "" || len(ns) > maxNameLen {
		return nil, fmt.Errorf("member Namespace %v is not a string of 1 to %d bytes", d["Namespace"], maxNameLen)
	}
	sets, ok := d["Dimensions"].([]any)
	if !ok {
		return nil, errors.New("member Dimensions is not an array")
	}
	var dimSets []map[string]string
	for j, s := range sets {
		names, ok := s.([]any)
		if !ok {
			return nil, fmt.Errorf("member Dimensions[%d] is not an array", j)
		}
		if len(names) > maxDimensions {
			return nil, fmt.Errorf("member Dimensions[%d] has %d dimensions, over %d", j, len(names), maxDimensions)
		}
		set := map[string]string{}
		for _, n := range names {
			name, ok := n.(string)
			if !ok || name == "" || len(name) > maxNameLen {
				return nil, fmt.Errorf("member Dimensions[%d]: %v is not a dimension name", j, n)
			}
			val, ok := root[name].(string)
			if !ok || val == "" || len(val) > maxDimensionValue {
				return nil, fmt.Errorf("dimension %q: the root member is %v, want a string of 1 to %d bytes", name, root[name], maxDimensionValue)
			}
			set[name] = val
		}
		dimSets = append(dimSets, set)
	}
	if len(dimSets) == 0 {
		// Metrics without dimensions: one empty set.
		dimSets = append(dimSets, map[string]string{})
	}
	defs, ok := d["Metrics"].([]any)
	if !ok || len(defs) == 0 || len(defs) > maxMetrics {
		return nil, fmt.Errorf("member Metrics is not an array of 1 to %d definitions", maxMetrics)
	}
	var out []Metric
	for j, m := range defs {
		name, unit, err := definition(m)
		if err != nil {
			return nil, fmt.Errorf("member Metrics[%d]: %w", j, err)
		}
		values, err := metricValues(root[name])
		if err != nil {
			return nil, fmt.Errorf("metric %q: %w", name, err)
		}
		for _, set := range dimSets {
			out = append(out, Metric{Namespace: ns, Name: name, Unit: unit, Dimensions: set, Values: values})
		}
	}
	return out, nil
}

func definition(v any) (name, unit string, err error) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", "", errors.New("not an object")
	}
	for k := range m {
		if k != "Name" && k != "Unit" && k != "StorageResolution" {
			return "", "", fmt.Errorf("member %q is not part of a MetricDefinition", k)
		}
	}
	name, ok = m["Name"].(string)
	if !ok || name == "" || len(name) > maxNameLen {
		return "", "", fmt.Errorf("member Name %v is not a string of 1 to %d bytes", m["Name"], maxNameLen)
	}
	if u, present := m["Unit"]; present {
		unit, ok = u.(string)
		if !ok || !slices.Contains(Units, unit) {
			return "", "", fmt.Errorf("member Unit %v is not a CloudWatch unit", u)
		}
	}
	if r, present := m["StorageResolution"]; present {
		if n, ok := r.(json.Number); !ok || n.String() != "1" && n.String() != "60" {
			return "", "", fmt.Errorf("member StorageResolution %v is neither 1 nor 60", r)
		}
	}
	return name, unit, nil
}

// metricValues reads a metric's root member: a number or an array of
// numbers.
func metricValues(v any) ([]float64, error) {
	switch x := v.(type) {
	case json.Number:
		f, err := number(x)
		return []float64{f}, err
	case []any:
		if len(x) == 0 || len(x) > maxValues {
			return nil, fmt.Errorf("an array of %d values, want 1 to %d", len(x), maxValues)
		}
		out := make([]float64, len(x))
		for i, e := range x {
			n, ok := e.(json.Number)
			if !ok {
				return nil, fmt.Errorf("value %v is not a number", e)
			}
			f, err := number(n)
			if err != nil {
				return nil, err
			}
			out[i] = f
		}
		return out, nil
	case nil:
		return nil, errors.New("no root member with its value")
	}
	return nil, fmt.Errorf("value %v is not a number", v)
}

func number(n json.Number) (float64, error) {
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("value %s is not a finite number", n)
	}
	return f, nil
}
