package deploytest_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ocyless/ocyless/internal/deploygen"
	"github.com/ocyless/ocyless/shared/deploytest"
)

// expected derives every function from the route table and the sweep
// kinds, the single source of truth.
func expected(t *testing.T) []deploygen.Function {
	t.Helper()
	in, err := deploygen.RepoInput(deploytest.RepoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := deploygen.Functions(in)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// functionResources returns the template's AWS::Serverless::Function
// resources by logical id.
func functionResources(tmpl map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for id, r := range asMap(tmpl["Resources"]) {
		if asMap(r)["Type"] == "AWS::Serverless::Function" {
			out[id] = asMap(r)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestTemplateAgreesWithRouteTable checks every function resource, as SAM
// sees it after AWS::LanguageExtensions and Globals, against the route
// table, the sweep kinds and events/.
func TestTemplateAgreesWithRouteTable(t *testing.T) {
	t.Parallel()
	root := deploytest.RepoRoot(t)
	raw := loadTemplate(t)
	tmpl, err := resolveLanguageExtensions(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := functionResources(tmpl)
	want := map[string]deploygen.Function{}
	for _, f := range expected(t) {
		want[f.LogicalID] = f
	}
	if g, w := sortedKeys(got), sortedKeys(want); !slices.Equal(g, w) {
		t.Fatalf("template functions = %q,\nwant %q (run make generate)", g, w)
	}
	if api := dig(tmpl, "Resources", "QueueApi", "Type"); api != "AWS::Serverless::HttpApi" {
		t.Fatalf("QueueApi is %v, want an AWS::Serverless::HttpApi", api)
	}
	redisPolicy := []any{map[string]any{"Fn::If": []any{"UseRedisIam", map[string]any{"Ref": "CacheConnectPolicy"}, map[string]any{"Ref": "AWS::NoValue"}}}}
	rawPolicy := func(id string) any { return dig(raw, "Resources", id, "Properties", "Policies") }
	for id, res := range got {
		f := want[id]
		props := mergeGlobals(tmpl, res)
		check := func(what string, gotV, wantV any) {
			t.Helper()
			if !reflect.DeepEqual(gotV, wantV) {
				t.Errorf("%s: %s = %#v, want %#v", id, what, gotV, wantV)
			}
		}
		check("Metadata.BuildMethod", dig(res, "Metadata", "BuildMethod"), "makefile")
		check("CodeUri", props["CodeUri"], ".")
		check("Runtime", props["Runtime"], "provided.al2023")
		check("Architectures", props["Architectures"], []any{"arm64"})
		check("Handler", props["Handler"], "bootstrap")
		check("LoggingConfig.LogGroup", dig(props, "LoggingConfig", "LogGroup"), map[string]any{"Ref": id + "Logs"})
		check("LoggingConfig.LogFormat", dig(props, "LoggingConfig", "LogFormat"), "JSON")
		if f.NeedsRedis {
			check("VpcConfig", props["VpcConfig"], map[string]any{
				"SubnetIds": map[string]any{"Ref": "SubnetIds"}, "SecurityGroupIds": []any{map[string]any{"Ref": "SecurityGroupId"}}})
			switch {
			case f.Wakes:
				check("Policies (before the transform)", rawPolicy(id), append(slices.Clone(redisPolicy), invokeDispatcher))
				check("OCYPOD_PUSH_DISPATCHER", dig(props, "Environment", "Variables", "OCYPOD_PUSH_DISPATCHER"),
					map[string]any{"Ref": deploygen.DispatcherID})
			case f.Dispatcher:
				pol, _ := rawPolicy(id).([]any)
				if len(pol) != 2 || !reflect.DeepEqual(pol[0], redisPolicy[0]) {
					t.Errorf("%s: Policies = %#v, want the cache's and the lambda targets'", id, pol)
				}
			default:
				check("Policies (before the transform)", rawPolicy(id), redisPolicy)
				check("OCYPOD_PUSH_DISPATCHER", dig(props, "Environment", "Variables", "OCYPOD_PUSH_DISPATCHER"), nil)
			}
			check("OCYPOD_REDIS_URL", dig(props, "Environment", "Variables", "OCYPOD_REDIS_URL"),
				dig(tmpl, "Globals", "Function", "Environment", "Variables", "OCYPOD_REDIS_URL"))
		} else {
			check("VpcConfig", props["VpcConfig"], nil)
			check("Policies", props["Policies"], nil)
			check("OCYPOD_REDIS_URL", dig(props, "Environment", "Variables", "OCYPOD_REDIS_URL"), deploygen.NoRedisURL)
			check("OCYPOD_REDIS_IAM_USER", dig(props, "Environment", "Variables", "OCYPOD_REDIS_IAM_USER"), "")
		}
		events := asMap(props["Events"])
		if len(events) != 1 {
			t.Errorf("%s: %d events, want 1", id, len(events))
			continue
		}
		var ev map[string]any
		for _, e := range events {
			ev = asMap(e)
		}
		evp := asMap(ev["Properties"])
		timeout, _ := props["Timeout"].(int)
		if f.Route != nil {
			check("event Type", ev["Type"], "HttpApi")
			check("event Method", evp["Method"], f.Route.Method)
			check("event Path", evp["Path"], f.Route.Pattern)
			check("event ApiId", evp["ApiId"], map[string]any{"Ref": "QueueApi"})
			check("event PayloadFormatVersion", evp["PayloadFormatVersion"], "2.0")
			if timeout <= 0 || timeout >= 30 {
				t.Errorf("%s: Timeout %d, want 1..29 (below the HTTP API's 30 s integration timeout)", id, timeout)
			}
			continue
		}
		check("event Type", ev["Type"], "ScheduleV2")
		check("event OmitName", evp["OmitName"], true)
		check("event FlexibleTimeWindow", evp["FlexibleTimeWindow"], map[string]any{"Mode": "OFF"})
		check("event RetryPolicy.MaximumRetryAttempts", dig(evp, "RetryPolicy", "MaximumRetryAttempts"), 0)
		check("EventInvokeConfig.MaximumRetryAttempts", dig(props, "EventInvokeConfig", "MaximumRetryAttempts"), 0)
		if f.Dispatcher {
			check("event ScheduleExpression", evp["ScheduleExpression"], "rate(1 minute)")
			check("ReservedConcurrentExecutions", props["ReservedConcurrentExecutions"], map[string]any{"Ref": "PushDispatcherConcurrency"})
			check("Timeout", props["Timeout"], map[string]any{"Ref": "PushDispatcherTimeout"})
			checkInput(t, root, f, evp)
			continue
		}
		check("event ScheduleExpression", evp["ScheduleExpression"], map[string]any{"Ref": "SweepRate"})
		check("ReservedConcurrentExecutions", props["ReservedConcurrentExecutions"], 1)
		check("EventInvokeConfig.MaximumRetryAttempts", dig(props, "EventInvokeConfig", "MaximumRetryAttempts"), 0)
		budget := dig(props, "Environment", "Variables", "OCYPOD_SWEEP_BUDGET")
		if f.Budget != "" {
			check("OCYPOD_SWEEP_BUDGET", budget, f.Budget)
		} else {
			check("OCYPOD_SWEEP_BUDGET", budget, map[string]any{"Ref": "SweepBudget"})
		}
		if timeout < 30 || timeout > 900 {
			t.Errorf("%s: Timeout %d, want a long-running sweeper (30..900 s)", id, timeout)
		}
		checkInput(t, root, f, evp)
	}
	// Without the reservation the sweepers get none (0 would stop them).
	open, err := resolveLanguageExtensions(raw, map[string]string{"ReserveSweeperConcurrency": "false"})
	if err != nil {
		t.Fatal(err)
	}
	for id, res := range functionResources(open) {
		if _, ok := asMap(res["Properties"])["ReservedConcurrentExecutions"]; ok && id != deploygen.DispatcherID {
			t.Errorf("ReserveSweeperConcurrency=false: %s still reserves concurrency", id)
		}
	}

	rate, _ := dig(tmpl, "Parameters", "SweepRate", "Default").(string)
	if !regexp.MustCompile(`^rate\((1 (minute|hour|day)|([2-9]|[1-9][0-9]+) (minutes|hours|days))\)$`).MatchString(rate) {
		t.Errorf("SweepRate default %q is not a valid rate() expression", rate)
	}
	envVars := asMap(dig(tmpl, "Globals", "Function", "Environment", "Variables"))
	for _, name := range []string{"OCYPOD_REDIS_URL", "OCYPOD_KEY_NAMESPACE", "OCYPOD_REDIS_CLUSTER", "OCYPOD_REDIS_IAM_USER", "OCYPOD_REDIS_CACHE_NAME", "OCYPOD_REDIS_SERVERLESS"} {
		if _, ok := envVars[name]; !ok {
			t.Errorf("Globals.Function.Environment lacks %s", name)
		}
	}
	if dig(tmpl, "Globals", "Function", "VpcConfig") != nil {
		t.Error("Globals.Function has a VpcConfig: the functions that never touch Redis would get it too")
	}
}

// invokeDispatcher is the policy of a function that wakes the dispatcher.
var invokeDispatcher = map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
	"Effect": "Allow", "Action": "lambda:InvokeFunction", "Resource": map[string]any{"Fn::GetAtt": []any{deploygen.DispatcherID, "Arn"}}}}}

// checkInput: a scheduled function's Input is its sample event, in meaning.
func checkInput(t *testing.T, root string, f deploygen.Function, evp map[string]any) {
	t.Helper()
	sample, err := os.ReadFile(filepath.Join(root, f.Event))
	if err != nil {
		t.Error(err)
		return
	}
	input, _ := evp["Input"].(string)
	var a, b any
	if json.Unmarshal([]byte(input), &a) != nil || json.Unmarshal(sample, &b) != nil || !reflect.DeepEqual(a, b) {
		t.Errorf("%s: Input %q differs from %s %q", f.LogicalID, input, f.Event, sample)
	}
}

// TestTemplateSecureByDefault: IAM auth on the API unless ApiAuth=NONE, a
// hidden Redis URL, and no IAM statement with a wildcard action.
func TestTemplateSecureByDefault(t *testing.T) {
	t.Parallel()
	tmpl := loadTemplate(t)
	if d := dig(tmpl, "Parameters", "ApiAuth", "Default"); d != "AWS_IAM" {
		t.Errorf("ApiAuth default = %v, want AWS_IAM", d)
	}
	if dig(tmpl, "Parameters", "RedisUrl", "NoEcho") != true {
		t.Error("RedisUrl is not NoEcho: a password in it would show in the console and in describe-stacks")
	}
	// SAM sets no default authorizer for an empty DefaultAuthorizer: the
	// routes are open; the IAM authorizer is then defined but unused.
	for params, want := range map[string]any{
		"AWS_IAM": map[string]any{"EnableIamAuthorizer": true, "DefaultAuthorizer": "AWS_IAM"},
		"NONE":    map[string]any{"EnableIamAuthorizer": true, "DefaultAuthorizer": ""},
	} {
		resolved, err := resolveLanguageExtensions(tmpl, map[string]string{"ApiAuth": params})
		if err != nil {
			t.Fatal(err)
		}
		if got := dig(resolved, "Resources", "QueueApi", "Properties", "Auth"); !reflect.DeepEqual(got, want) {
			t.Errorf("ApiAuth=%s: QueueApi Auth = %v, want %v", params, got, want)
		}
	}
	if !slices.Contains(anyStrings(tmpl["Transform"]), "AWS::LanguageExtensions") {
		t.Error("the ApiAuth switch needs the AWS::LanguageExtensions transform (SAM reads HttpApi Auth literally)")
	}
	var walk func(path string, x any)
	walk = func(path string, x any) {
		switch x := x.(type) {
		case map[string]any:
			for k, v := range x {
				if k == "Action" || k == "NotAction" {
					for _, a := range anyStrings(v) {
						if strings.Contains(a, "*") {
							t.Errorf("%s: wildcard action %q", path, a)
						}
					}
				}
				walk(path+"/"+k, v)
			}
		case []any:
			for _, v := range x {
				walk(path, v)
			}
		}
	}
	walk("", tmpl["Resources"])
	if asMap(dig(tmpl, "Resources", "CacheConnectPolicy"))["Condition"] != "UseRedisIam" {
		t.Error("CacheConnectPolicy must only exist with IAM auth (Condition: UseRedisIam)")
	}
}

// TestTemplateRules: CloudFormation refuses inconsistent parameters before
// it touches anything.
func TestTemplateRules(t *testing.T) {
	t.Parallel()
	tmpl := loadTemplate(t)
	tests := []struct {
		name   string
		params map[string]string
		want   []string // substrings of the failed assertions, in sorted order
	}{
		{"defaults", nil, nil},
		{"IAM auth", map[string]string{"RedisIamUser": "ocyless-lambda", "RedisCacheName": "ocyless"}, nil},
		{"IAM auth without a cache name", map[string]string{"RedisIamUser": "ocyless-lambda"}, []string{"RedisCacheName is required"}},
		{"IAM auth in plaintext", map[string]string{"RedisIamUser": "u", "RedisCacheName": "c", "AllowPlaintextRedis": "true"}, []string{"IAM auth only works over TLS"}},
		{"plaintext without IAM", map[string]string{"AllowPlaintextRedis": "true"}, nil},
		{"serverless", map[string]string{"RedisServerless": "true", "RedisClusterMode": "true"}, nil},
		{"serverless without cluster mode", map[string]string{"RedisServerless": "true"}, []string{"cluster-mode endpoint"}},
		{"serverless in plaintext", map[string]string{"RedisServerless": "true", "RedisClusterMode": "true", "AllowPlaintextRedis": "true"}, []string{"only accepts TLS"}},
		{"cluster mode alone", map[string]string{"RedisClusterMode": "true"}, nil},
	}
	for _, tt := range tests {
		got, err := ruleFailures(tmpl, tt.params)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		ok := len(got) == len(tt.want)
		for i := 0; ok && i < len(got); i++ {
			ok = strings.Contains(got[i], tt.want[i])
		}
		if !ok {
			t.Errorf("%s: failed assertions %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestRedisUrlTls: whatever scheme RedisUrl names, the functions connect
// with TLS unless AllowPlaintextRedis is 'true'.
func TestRedisUrlTls(t *testing.T) {
	t.Parallel()
	raw := loadTemplate(t)
	tests := []struct{ url, allow, want string }{
		{"rediss://master.c.euw1.cache.amazonaws.com:6379", "false", "rediss://master.c.euw1.cache.amazonaws.com:6379"},
		{"redis://master.c.euw1.cache.amazonaws.com:6379", "false", "rediss://master.c.euw1.cache.amazonaws.com:6379"},
		{"redis://u:p%2Fw@h:6379/2", "false", "rediss://u:p%2Fw@h:6379/2"},
		{"redis://h:6379", "true", "redis://h:6379"},
		{"rediss://h:6379", "true", "rediss://h:6379"},
	}
	pattern := regexp.MustCompile(dig(raw, "Parameters", "RedisUrl", "AllowedPattern").(string))
	for _, tt := range tests {
		if !pattern.MatchString(tt.url) {
			t.Errorf("RedisUrl %q does not match its AllowedPattern", tt.url)
			continue
		}
		params := map[string]string{"RedisUrl": tt.url, "AllowPlaintextRedis": tt.allow}
		tmpl, err := resolveLanguageExtensions(raw, params)
		if err != nil {
			t.Fatal(err)
		}
		got, err := evalString(dig(tmpl, "Globals", "Function", "Environment", "Variables", "OCYPOD_REDIS_URL"), paramValues(raw, params))
		if err != nil || got != tt.want {
			t.Errorf("RedisUrl=%s AllowPlaintextRedis=%s: OCYPOD_REDIS_URL = %v (%v), want %s", tt.url, tt.allow, got, err, tt.want)
		}
	}
	for _, bad := range []string{"http://h", "master.c:6379", "rediss://", "redis:// h"} {
		if pattern.MatchString(bad) {
			t.Errorf("RedisUrl AllowedPattern accepts %q", bad)
		}
	}
}

// conditionValue evaluates the template condition name for params.
func conditionValue(t *testing.T, tmpl map[string]any, params map[string]string, name string) bool {
	t.Helper()
	probe := map[string]any{
		"Parameters": tmpl["Parameters"],
		"Conditions": tmpl["Conditions"],
		"Outputs":    map[string]any{"Probe": map[string]any{"Fn::If": []any{name, true, false}}},
	}
	resolved, err := resolveLanguageExtensions(probe, params)
	if err != nil {
		t.Fatal(err)
	}
	return dig(resolved, "Outputs", "Probe") == true
}

// TestTemplateOperations checks logs, throttling, alarms and outputs.
func TestTemplateOperations(t *testing.T) {
	t.Parallel()
	raw := loadTemplate(t)
	tmpl, err := resolveLanguageExtensions(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	resources := asMap(tmpl["Resources"])

	// A log group per function, and one for the API, all kept LogRetentionDays.
	if d := dig(tmpl, "Parameters", "LogRetentionDays", "Default"); d != 30 {
		t.Errorf("LogRetentionDays default = %v, want 30", d)
	}
	logGroups := map[string]bool{}
	for id, r := range resources {
		if asMap(r)["Type"] != "AWS::Logs::LogGroup" {
			continue
		}
		logGroups[id] = true
		if got := dig(r, "Properties", "RetentionInDays"); !reflect.DeepEqual(got, map[string]any{"Ref": "LogRetentionDays"}) {
			t.Errorf("%s: RetentionInDays = %v, want Ref LogRetentionDays", id, got)
		}
	}
	for _, f := range expected(t) {
		if !logGroups[f.LogicalID+"Logs"] {
			t.Errorf("%s has no log group %sLogs", f.LogicalID, f.LogicalID)
		}
	}
	api := asMap(dig(resources, "QueueApi", "Properties"))
	if got := dig(api, "AccessLogSettings", "DestinationArn"); !reflect.DeepEqual(got, map[string]any{"Fn::GetAtt": []any{"ApiAccessLogs", "Arn"}}) || !logGroups["ApiAccessLogs"] {
		t.Errorf("API access logs go to %v, want the ApiAccessLogs log group", got)
	}
	var format map[string]any
	if err := json.Unmarshal([]byte(fmt.Sprint(dig(api, "AccessLogSettings", "Format"))), &format); err != nil || format["requestId"] != "$context.requestId" {
		t.Errorf("access log Format is not JSON with the request id: %v", err)
	}
	if got := dig(api, "DefaultRouteSettings"); !reflect.DeepEqual(got, map[string]any{
		"ThrottlingRateLimit": map[string]any{"Ref": "ApiThrottlingRateLimit"}, "ThrottlingBurstLimit": map[string]any{"Ref": "ApiThrottlingBurstLimit"}}) {
		t.Errorf("QueueApi DefaultRouteSettings = %v, want the throttling parameters", got)
	}

	// Alarms: only with a topic, every function watched, at most 10 metrics each.
	topic := map[string]string{"AlarmTopicArn": "arn:aws:sns:eu-west-1:123456789012:alarms"}
	if conditionValue(t, raw, nil, "UseAlarms") || !conditionValue(t, raw, topic, "UseAlarms") {
		t.Error("UseAlarms must be false without AlarmTopicArn and true with one")
	}
	watched := map[string][]string{} // function -> metrics
	var oldest, api5xx bool
	for id, r := range resources {
		if asMap(r)["Type"] != "AWS::CloudWatch::Alarm" {
			continue
		}
		if asMap(r)["Condition"] != "UseAlarms" {
			t.Errorf("%s: Condition = %v, want UseAlarms (no alarm without a topic)", id, asMap(r)["Condition"])
		}
		p := asMap(asMap(r)["Properties"])
		if !reflect.DeepEqual(p["AlarmActions"], []any{map[string]any{"Ref": "AlarmTopicArn"}}) {
			t.Errorf("%s: AlarmActions = %v", id, p["AlarmActions"])
		}
		switch p["MetricName"] {
		case "5xx":
			api5xx = p["Namespace"] == "AWS/ApiGateway" && reflect.DeepEqual(p["Dimensions"], []any{map[string]any{"Name": "ApiId", "Value": map[string]any{"Ref": "QueueApi"}}})
		case "OldestDueJobAgeSeconds":
			// The dimension is the namespace the sweepers use: "ocypod" when KeyNamespace is empty.
			empty, err := resolveLanguageExtensions(raw, map[string]string{"KeyNamespace": ""})
			if err != nil {
				t.Fatal(err)
			}
			oldest = p["Namespace"] == "ocyless" &&
				reflect.DeepEqual(p["Dimensions"], []any{map[string]any{"Name": "KeyNamespace", "Value": map[string]any{"Ref": "KeyNamespace"}}}) &&
				reflect.DeepEqual(dig(empty, "Resources", id, "Properties", "Dimensions"), []any{map[string]any{"Name": "KeyNamespace", "Value": "ocypod"}})
		}
		metrics, _ := p["Metrics"].([]any)
		stats := 0
		for _, m := range metrics {
			ms := asMap(asMap(m)["MetricStat"])
			if ms == nil {
				continue
			}
			stats++
			fn, _ := dig(ms, "Metric", "Dimensions").([]any)
			if len(fn) == 1 {
				name := asMap(dig(asMap(fn[0]), "Value"))["Ref"]
				watched[fmt.Sprint(name)] = append(watched[fmt.Sprint(name)], fmt.Sprint(dig(ms, "Metric", "MetricName")))
			}
		}
		if stats > 10 {
			t.Errorf("%s reads %d metrics; CloudWatch metric math alarms take at most 10", id, stats)
		}
	}
	if !api5xx || !oldest {
		t.Errorf("want an API 5xx alarm (%v) and an OldestDueJobAgeSeconds alarm in namespace ocyless, dimension KeyNamespace (%v)", api5xx, oldest)
	}
	for _, f := range expected(t) {
		got := watched[f.LogicalID]
		slices.Sort(got)
		want := []string{"Errors", "Throttles"}
		if f.Route == nil {
			want = []string{"Errors"} // a throttled tick is the reservation doing its job
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: alarms watch %q, want %q once each", f.LogicalID, got, want)
		}
	}

	outputs := asMap(tmpl["Outputs"])
	if _, ok := dig(outputs, "ApiUrl", "Value").(map[string]any); !ok {
		t.Error("no ApiUrl output")
	}
	if got := dig(outputs, "ApiInvokeArn", "Value"); !reflect.DeepEqual(got, map[string]any{
		"Fn::Sub": "arn:${AWS::Partition}:execute-api:${AWS::Region}:${AWS::AccountId}:${QueueApi}/*"}) {
		t.Errorf("ApiInvokeArn = %v", got)
	}
}
