package deploytest_test

import (
	"slices"
	"testing"

	"github.com/ocyless/ocyless/internal/deploygen"
	"github.com/ocyless/ocyless/shared/metrics/emf"
)

// TestPushDispatcherTemplate: in every branch of the push parameters, the
// dispatcher's role may invoke exactly PushLambdaTargets (their versions
// and aliases too) and nothing when it is empty, its reserved concurrency
// follows PushDispatcherConcurrency (0: none), every function gets
// PushAllowedHosts, and the failure alarm reads the dispatcher's metric.
func TestPushDispatcherTemplate(t *testing.T) {
	t.Parallel()
	raw := loadTemplate(t)
	for _, tt := range []struct {
		name      string
		params    map[string]string
		resources []string // nil: no invoke statement
		reserved  any
	}{
		{"defaults", nil, nil, 5},
		{"targets", map[string]string{"PushLambdaTargets": pushTargets, "PushDispatcherConcurrency": "0",
			"AlarmTopicArn": "arn:aws:sns:eu-west-1:123456789012:a"}, []string{
			"arn:aws:lambda:eu-west-1:123456789012:function:worker", "arn:aws:lambda:eu-west-1:123456789012:function:other",
			"arn:aws:lambda:eu-west-1:123456789012:function:worker:*", "arn:aws:lambda:eu-west-1:123456789012:function:other:*",
		}, nil},
		{"one target", map[string]string{"PushLambdaTargets": "arn:aws:lambda:eu-west-1:123456789012:function:worker", "PushDispatcherConcurrency": "2"},
			[]string{"arn:aws:lambda:eu-west-1:123456789012:function:worker", "arn:aws:lambda:eu-west-1:123456789012:function:worker:*"}, 2},
	} {
		tmpl, err := resolveLanguageExtensions(raw, tt.params)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		values := paramValues(tmpl, tt.params)
		props := asMap(dig(tmpl, "Resources", deploygen.DispatcherID, "Properties"))
		var got []string
		for _, p := range props["Policies"].([]any) {
			for _, st := range asMap(p)["Statement"].([]any) {
				st := asMap(st)
				if st["Action"] != "lambda:InvokeFunction" || st["Effect"] != "Allow" {
					t.Errorf("%s: dispatcher statement %v", tt.name, st)
				}
				v, err := evalString(st["Resource"], values)
				if err != nil {
					t.Fatalf("%s: %v", tt.name, err)
				}
				got = append(got, v.([]string)...)
			}
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tt.resources))
		if !slices.Equal(got, want) {
			t.Errorf("%s: the dispatcher may invoke %q, want %q", tt.name, got, want)
		}
		if r, ok := props["ReservedConcurrentExecutions"]; tt.reserved == nil && ok {
			t.Errorf("%s: reserved concurrency %v, want none", tt.name, r)
		} else if tt.reserved != nil {
			if v, err := evalString(r, values); err != nil || v != values["PushDispatcherConcurrency"] {
				t.Errorf("%s: reserved concurrency %v (%v), want %v", tt.name, v, err, tt.reserved)
			}
		}
		if dig(tmpl, "Globals", "Function", "Environment", "Variables", "OCYPOD_PUSH_ALLOWED_HOSTS") == nil {
			t.Errorf("%s: no OCYPOD_PUSH_ALLOWED_HOSTS for the functions", tt.name)
		}
	}
	alarm := asMap(dig(raw, "Resources", "PushFailuresAlarm"))
	if alarm["Condition"] != "UseAlarms" || dig(alarm, "Properties", "MetricName") != emf.PushFailedJobs ||
		dig(alarm, "Properties", "Namespace") != emf.Namespace {
		t.Errorf("PushFailuresAlarm = %v, want one on %s/%s with the alarms", alarm, emf.Namespace, emf.PushFailedJobs)
	}
	if d := dig(raw, "Parameters", "PushAllowedHosts", "Default"); d != "" {
		t.Errorf("PushAllowedHosts defaults to %v, want none", d)
	}
}
