package deploygen

import (
	"fmt"
	"strings"
)

// Alarm metric math reads at most 10 metrics per alarm (a hard CloudWatch
// limit), so functions are grouped: a route function contributes Errors
// and Throttles, a sweeper Errors only (its throttles are the reserved
// concurrency refusing an overlapping run, which is intended).
const (
	routesPerAlarm   = 5
	sweepersPerAlarm = 10
)

// templateSection renders the generated part of template.yaml's Resources,
// markers included.
func templateSection(fs []Function) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("%s\n", BeginMarker)
	w("  # One log group and one function per route of shared/httpapi/routes.go and per\n")
	w("  # sweep kind, then their alarms. Edit the generator (internal/deploygen), not this.\n")
	var routes, sweepers []Function
	for _, f := range fs {
		if f.Route != nil {
			routes = append(routes, f)
		} else {
			sweepers = append(sweepers, f)
		}
	}
	for _, f := range fs {
		w("\n")
		logGroup(&b, f)
		w("\n")
		if f.Route != nil {
			routeFunction(&b, f)
		} else {
			sweeperFunction(&b, f)
		}
	}
	for i := 0; i < len(routes); i += routesPerAlarm {
		w("\n")
		alarm(&b, fmt.Sprintf("RouteFunctionsAlarm%d", i/routesPerAlarm+1), routes[i:min(i+routesPerAlarm, len(routes))],
			[]string{"Errors", "Throttles"}, "failed or throttled invocations", 1, 1)
	}
	for i := 0; i < len(sweepers); i += sweepersPerAlarm {
		w("\n")
		alarm(&b, fmt.Sprintf("SweepersAlarm%d", i/sweepersPerAlarm+1), sweepers[i:min(i+sweepersPerAlarm, len(sweepers))],
			[]string{"Errors"}, "failed sweeper runs", 3, 2)
	}
	w("%s\n", EndMarker)
	return b.String()
}

func logGroupID(f Function) string { return f.LogicalID + "Logs" }

func logGroup(b *strings.Builder, f Function) {
	fmt.Fprintf(b, "  %s:\n", logGroupID(f))
	b.WriteString("    Type: AWS::Logs::LogGroup\n")
	b.WriteString("    Properties:\n")
	fmt.Fprintf(b, "      LogGroupName: !Sub '/aws/lambda/${AWS::StackName}/%s'\n", f.LogicalID)
	b.WriteString("      RetentionInDays: !Ref LogRetentionDays\n")
}

// commonProperties writes what every function has: build, log group, and
// the VPC and cache permission of those that use Redis.
func commonProperties(b *strings.Builder, f Function, description string) {
	fmt.Fprintf(b, "  %s:\n", f.LogicalID)
	b.WriteString("    Type: AWS::Serverless::Function\n")
	b.WriteString("    Metadata: {BuildMethod: makefile}\n")
	b.WriteString("    Properties:\n")
	b.WriteString("      CodeUri: .\n")
	fmt.Fprintf(b, "      Description: %s\n", yamlQuote(description))
	fmt.Fprintf(b, "      LoggingConfig: {LogGroup: !Ref %s}\n", logGroupID(f))
	if f.NeedsRedis {
		b.WriteString("      VpcConfig: {SubnetIds: !Ref SubnetIds, SecurityGroupIds: [!Ref SecurityGroupId]}\n")
		b.WriteString("      Policies: [!If [UseRedisIam, !Ref CacheConnectPolicy, !Ref AWS::NoValue]]\n")
	}
}

func routeFunction(b *strings.Builder, f Function) {
	r := f.Route
	desc := fmt.Sprintf("%s %s (%s)", r.Method, r.Pattern, f.Dir)
	if !f.NeedsRedis {
		desc += ", never touches Redis"
	}
	commonProperties(b, f, desc)
	if f.Timeout != 0 {
		fmt.Fprintf(b, "      Timeout: %d   # takes long-poll up to 20 s (?wait=); below API Gateway's 30 s\n", f.Timeout)
	}
	if !f.NeedsRedis {
		b.WriteString("      # No VPC, no cache permission, and neither the cache's address nor its\n")
		b.WriteString("      # credentials: the handler never touches Redis (httpapi.NeedsStore).\n")
		b.WriteString("      Environment:\n")
		fmt.Fprintf(b, "        Variables: {OCYPOD_REDIS_URL: %s, OCYPOD_REDIS_IAM_USER: ''}\n", yamlQuote(NoRedisURL))
	}
	b.WriteString("      Events:\n")
	b.WriteString("        Api:\n")
	b.WriteString("          Type: HttpApi\n")
	fmt.Fprintf(b, "          Properties: {ApiId: !Ref QueueApi, Method: %s, Path: %s, PayloadFormatVersion: '2.0'}\n",
		r.Method, yamlQuote(r.Pattern))
}

func sweeperFunction(b *strings.Builder, f Function) {
	commonProperties(b, f, fmt.Sprintf("sweep %s (%s)", f.Kind, f.Dir))
	b.WriteString("      MemorySize: 128\n")
	b.WriteString("      Timeout: 60\n")
	b.WriteString("      ReservedConcurrentExecutions: !If [ReserveSweepers, 1, !Ref AWS::NoValue]\n")
	b.WriteString("      Environment:\n")
	if f.Budget != "" {
		fmt.Fprintf(b, "        Variables: {OCYPOD_SWEEP_BUDGET: %s}   # not latency-sensitive: one pass per tick\n", f.Budget)
	} else {
		b.WriteString("        Variables: {OCYPOD_SWEEP_BUDGET: !Ref SweepBudget}\n")
	}
	b.WriteString("      EventInvokeConfig: {MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60}   # the next tick sweeps again\n")
	b.WriteString("      Events:\n")
	b.WriteString("        Tick:\n")
	b.WriteString("          Type: ScheduleV2\n")
	b.WriteString("          Properties:\n")
	b.WriteString("            ScheduleExpression: !Ref SweepRate\n")
	b.WriteString("            FlexibleTimeWindow: {Mode: 'OFF'}\n")
	fmt.Fprintf(b, "            Input: %s\n", yamlQuote(sweepInput(f)))
	b.WriteString("            RetryPolicy: {MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60}\n")
	b.WriteString("            OmitName: true   # CloudFormation names it: two stacks in one account do not collide\n")
}

// alarm writes an alarm on the sum of metrics over fs, each 5 minutes:
// it fires when the sum reaches threshold in periods consecutive periods.
func alarm(b *strings.Builder, id string, fs []Function, metrics []string, what string, threshold, periods int) {
	var names, ids []string
	for _, f := range fs {
		names = append(names, f.LogicalID)
	}
	fmt.Fprintf(b, "  %s:\n", id)
	b.WriteString("    Type: AWS::CloudWatch::Alarm\n")
	b.WriteString("    Condition: UseAlarms\n")
	b.WriteString("    Properties:\n")
	fmt.Fprintf(b, "      AlarmDescription: !Sub '${AWS::StackName}: %s of %s'\n", what, strings.Join(names, ", "))
	b.WriteString("      AlarmActions: [!Ref AlarmTopicArn]\n")
	b.WriteString("      OKActions: [!Ref AlarmTopicArn]\n")
	b.WriteString("      ComparisonOperator: GreaterThanOrEqualToThreshold\n")
	fmt.Fprintf(b, "      Threshold: %d\n", threshold)
	fmt.Fprintf(b, "      EvaluationPeriods: %d\n", periods)
	fmt.Fprintf(b, "      DatapointsToAlarm: %d\n", periods)
	b.WriteString("      TreatMissingData: notBreaching\n")
	b.WriteString("      Metrics:\n")
	var stats strings.Builder
	for i, f := range fs {
		for _, m := range metrics {
			mid := fmt.Sprintf("%s%d", strings.ToLower(m[:1]), i+1)
			ids = append(ids, mid)
			fmt.Fprintf(&stats, "        - {Id: %s, ReturnData: false, MetricStat: {Stat: Sum, Period: 300, Metric: {Namespace: AWS/Lambda, MetricName: %s, Dimensions: [{Name: FunctionName, Value: !Ref %s}]}}}\n",
				mid, m, f.LogicalID)
		}
	}
	fmt.Fprintf(b, "        - {Id: total, Label: %s, ReturnData: true, Expression: 'SUM(FILL([%s], 0))'}\n", yamlQuote(what), strings.Join(ids, ", "))
	b.WriteString(stats.String())
}
