package deploygen

import (
	"fmt"
	"slices"
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
	var routes, sweepers, dispatchers []Function
	for _, f := range fs {
		switch {
		case f.Route != nil:
			routes = append(routes, f)
		case f.Dispatcher:
			dispatchers = append(dispatchers, f)
		default:
			sweepers = append(sweepers, f)
		}
	}
	for _, f := range fs {
		w("\n")
		logGroup(&b, f)
		w("\n")
		switch {
		case f.Route != nil:
			routeFunction(&b, f)
		case f.Dispatcher:
			dispatcherFunction(&b, f)
		default:
			sweeperFunction(&b, f)
		}
	}
	w("\n")
	w("  # The internal Application Load Balancer's rules (InternalAlb=true): per route a\n")
	w("  # target group of its function, the permission to invoke it, and a listener rule by\n")
	w("  # method and path, more specific paths first (an ALB '*' also matches '/').\n")
	for i, f := range AlbOrder(routes) {
		w("\n")
		albRoute(&b, f, i+1)
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
	if len(dispatchers) > 0 {
		w("\n")
		alarm(&b, "PushDispatcherErrorsAlarm", dispatchers, []string{"Errors"}, "failed push dispatcher runs", 3, 2)
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

// invokeDispatcherPolicy lets a role invoke the push dispatcher and no
// other function.
const invokeDispatcherPolicy = "{Version: '2012-10-17', Statement: [{Effect: Allow, Action: lambda:InvokeFunction, Resource: !GetAtt " + DispatcherID + ".Arn}]}"

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
	}
	switch {
	case f.Wakes:
		b.WriteString("      Policies:\n")
		b.WriteString("        - !If [UseRedisIam, !Ref CacheConnectPolicy, !Ref AWS::NoValue]\n")
		fmt.Fprintf(b, "        - %s\n", invokeDispatcherPolicy)
	case f.Dispatcher:
		b.WriteString("      Policies:\n")
		b.WriteString("        - !If [UseRedisIam, !Ref CacheConnectPolicy, !Ref AWS::NoValue]\n")
		b.WriteString("        # lambda targets: exactly the functions of PushLambdaTargets (and their versions\n")
		b.WriteString("        # and aliases); none when it is empty.\n")
		b.WriteString("        - !If\n")
		b.WriteString("          - HasPushLambdaTargets\n")
		b.WriteString("          - Version: '2012-10-17'\n")
		b.WriteString("            Statement:\n")
		b.WriteString("              - Effect: Allow\n")
		b.WriteString("                Action: lambda:InvokeFunction\n")
		b.WriteString("                Resource: !Split [',', !Join ['', [!Join [',', !Ref PushLambdaTargets], ',', !Join [':*,', !Ref PushLambdaTargets], ':*']]]\n")
		b.WriteString("          - !Ref AWS::NoValue\n")
	case f.NeedsRedis:
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
		fmt.Fprintf(b, "      Timeout: %d   # requests may wait up to 20 s (?wait=); below API Gateway's 30 s\n", f.Timeout)
	}
	if f.Wakes {
		b.WriteString("      Environment:   # it wakes the push dispatcher after a create into a push queue\n")
		fmt.Fprintf(b, "        Variables: {OCYPOD_PUSH_DISPATCHER: !Ref %s}\n", DispatcherID)
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

func dispatcherFunction(b *strings.Builder, f Function) {
	commonProperties(b, f, fmt.Sprintf("push dispatcher (%s): delivers the jobs of push queues", f.Dir))
	b.WriteString("      MemorySize: 256\n")
	b.WriteString("      Timeout: !Ref PushDispatcherTimeout   # no delivery runs past it\n")
	b.WriteString("      ReservedConcurrentExecutions: !If [ReservePushDispatcher, !Ref PushDispatcherConcurrency, !Ref AWS::NoValue]\n")
	b.WriteString("      EventInvokeConfig: {MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60}   # the next wake or tick dispatches again\n")
	b.WriteString("      Events:\n")
	b.WriteString("        Tick:   # scheduled jobs and retries of push queues, and wakes that were lost\n")
	b.WriteString("          Type: ScheduleV2\n")
	b.WriteString("          Properties:\n")
	b.WriteString("            ScheduleExpression: rate(1 minute)\n")
	b.WriteString("            FlexibleTimeWindow: {Mode: 'OFF'}\n")
	fmt.Fprintf(b, "            Input: %s\n", yamlQuote(sweepInput(f)))
	b.WriteString("            RetryPolicy: {MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60}\n")
	b.WriteString("            OmitName: true\n")
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

// AlbPathPattern is a route pattern as an ALB path-pattern condition:
// each {name} segment becomes "*".
func AlbPathPattern(pattern string) string {
	segs := strings.Split(pattern, "/")
	for i, seg := range segs {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			segs[i] = "*"
		}
	}
	return strings.Join(segs, "/")
}

// AlbOrder sorts route functions into listener-rule priority order (the
// first is priority 1): an ALB "*" matches any characters, "/" included,
// so "/job/*" would also take "/job/7/status". Patterns with more segments
// come first, then those with more literal characters, then by pattern and
// method; among one method's routes no later pattern can then match a path
// an earlier one is for (deploytest checks every route's sample).
func AlbOrder(fs []Function) []Function {
	out := slices.Clone(fs)
	literal := func(p string) int { return len(strings.ReplaceAll(AlbPathPattern(p), "*", "")) }
	slices.SortStableFunc(out, func(a, b Function) int {
		pa, pb := a.Route.Pattern, b.Route.Pattern
		if c := strings.Count(pb, "/") - strings.Count(pa, "/"); c != 0 {
			return c
		}
		if c := literal(pb) - literal(pa); c != 0 {
			return c
		}
		if c := strings.Compare(pa, pb); c != 0 {
			return c
		}
		return strings.Compare(a.Route.Method, b.Route.Method)
	})
	return out
}

// albRoute writes a route's target group, the load balancer's permission
// to invoke its function, and its listener rule at priority.
func albRoute(b *strings.Builder, f Function, priority int) {
	r := f.Route
	fmt.Fprintf(b, "  %sAlbPermission:\n", f.LogicalID)
	b.WriteString("    Type: AWS::Lambda::Permission\n")
	b.WriteString("    Condition: UseAlb\n")
	b.WriteString("    Properties:\n")
	fmt.Fprintf(b, "      FunctionName: !GetAtt %s.Arn\n", f.LogicalID)
	b.WriteString("      Action: lambda:InvokeFunction\n")
	b.WriteString("      Principal: elasticloadbalancing.amazonaws.com\n")
	b.WriteString("      SourceAccount: !Ref AWS::AccountId\n")
	fmt.Fprintf(b, "  %sAlbTargetGroup:\n", f.LogicalID)
	b.WriteString("    Type: AWS::ElasticLoadBalancingV2::TargetGroup\n")
	b.WriteString("    Condition: UseAlb\n")
	fmt.Fprintf(b, "    DependsOn: %sAlbPermission\n", f.LogicalID)
	b.WriteString("    Properties:\n")
	b.WriteString("      TargetType: lambda\n")
	b.WriteString("      HealthCheckEnabled: false   # a health check would invoke the function\n")
	fmt.Fprintf(b, "      Targets: [{Id: !GetAtt %s.Arn}]\n", f.LogicalID)
	b.WriteString("      TargetGroupAttributes: [{Key: lambda.multi_value_headers.enabled, Value: 'true'}]\n")
	fmt.Fprintf(b, "  %sAlbRule:\n", f.LogicalID)
	b.WriteString("    Type: AWS::ElasticLoadBalancingV2::ListenerRule\n")
	b.WriteString("    Condition: UseAlb\n")
	b.WriteString("    Properties:\n")
	b.WriteString("      ListenerArn: !Ref QueueAlbListener\n")
	fmt.Fprintf(b, "      Priority: %d\n", priority)
	b.WriteString("      Conditions:\n")
	fmt.Fprintf(b, "        - {Field: http-request-method, HttpRequestMethodConfig: {Values: [%s]}}\n", r.Method)
	fmt.Fprintf(b, "        - {Field: path-pattern, PathPatternConfig: {Values: [%s]}}\n", yamlQuote(AlbPathPattern(r.Pattern)))
	fmt.Fprintf(b, "      Actions: [{Type: forward, TargetGroupArn: !Ref %sAlbTargetGroup}]\n", f.LogicalID)
}
