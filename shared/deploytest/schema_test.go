package deploytest_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/ocyless/ocyless/shared/deploytest"
)

// samSchemaPath is the AWS SAM JSON schema (draft-04), schema_source/sam.schema.json
// of github.com/aws/serverless-application-model (Apache-2.0), copied here
// because it is on no registry.
const samSchemaPath = "testdata/sam.schema.json"

// notServerlessPattern is the schema's one pattern RE2 cannot compile.
const notServerlessPattern = "^(?!AWS::Serverless::).+$"

// notPrefixRE2 returns an RE2 pattern matching the non-empty one-line
// strings that do not start with prefix: shorter than it, or differing
// from it at some position. Dropping the lookahead instead would accept
// every resource type.
func notPrefixRE2(prefix string) string {
	alts := []string{".{1," + strconv.Itoa(len(prefix)-1) + "}"}
	for i := 0; i < len(prefix); i++ {
		alts = append(alts, regexp.QuoteMeta(prefix[:i])+"[^"+regexp.QuoteMeta(prefix[i:i+1])+"].*")
	}
	return "^(?:" + strings.Join(alts, "|") + ")$"
}

// samSchema compiles the SAM schema.
func samSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	data, err := os.ReadFile(samSchemaPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(notServerlessPattern)) {
		t.Fatalf("%s no longer contains %q: revisit the RE2 rewrite", samSchemaPath, notServerlessPattern)
	}
	quoted, _ := json.Marshal(notServerlessPattern)
	replacement, _ := json.Marshal(notPrefixRE2("AWS::Serverless::"))
	data = bytes.ReplaceAll(data, quoted, replacement)
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft4
	if err := c.AddResource("sam.schema.json", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("sam.schema.json")
	if err != nil {
		t.Fatalf("compiling the SAM schema: %v", err)
	}
	return s
}

func TestNotPrefixRE2(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(notPrefixRE2("AWS::Serverless::"))
	for s, want := range map[string]bool{
		"AWS::IAM::ManagedPolicy":    true,
		"AWS::Serverless":            true,
		"AWS::Serverless:":           true,
		"AWS::ServerlessX::Function": true,
		"A":                          true,
		"Custom::Thing":              true,
		"":                           false,
		"AWS::Serverless::":          false,
		"AWS::Serverless::Function":  false,
	} {
		if got := re.MatchString(s); got != want {
			t.Errorf("match(%q) = %v, want %v", s, got, want)
		}
	}
}

// templateVariants are the parameter sets the template is validated with:
// every Fn::If branch SAM can see.
var templateVariants = map[string]map[string]string{
	"defaults":  nil,
	"open API":  {"ApiAuth": "NONE"},
	"IAM redis": {"RedisIamUser": "ocyless-lambda", "RedisCacheName": "ocyless", "RedisServerless": "true", "RedisClusterMode": "true"},
	"alarms, plaintext, no reservation": {"AlarmTopicArn": "arn:aws:sns:eu-west-1:123456789012:ocyless-alarms",
		"AllowPlaintextRedis": "true", "ReserveSweeperConcurrency": "false", "KeyNamespace": ""},
	"push: lambda targets, hosts, no reservation": {"PushLambdaTargets": pushTargets, "PushAllowedHosts": "api.example.com,hooks.example.org:8443",
		"PushDispatcherConcurrency": "0", "PushDispatcherTimeout": "900", "AlarmTopicArn": "arn:aws:sns:eu-west-1:123456789012:ocyless-alarms"},
	"push: one lambda target": {"PushLambdaTargets": "arn:aws:lambda:eu-west-1:123456789012:function:worker"},
}

// pushTargets is a PushLambdaTargets value of two functions.
const pushTargets = "arn:aws:lambda:eu-west-1:123456789012:function:worker,arn:aws:lambda:eu-west-1:123456789012:function:other"

// TestTemplateSchema validates template.yaml against the SAM JSON schema,
// as SAM receives it after AWS::LanguageExtensions, for each variant.
func TestTemplateSchema(t *testing.T) {
	t.Parallel()
	schema := samSchema(t)
	tmpl := loadTemplate(t)
	for name, params := range templateVariants {
		resolved, err := resolveLanguageExtensions(tmpl, params)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := schema.Validate(toJSON(t, resolved)); err != nil {
			t.Errorf("%s: template.yaml does not validate:\n%#v", name, err)
		}
	}
}

// TestTemplateSchemaRejects makes sure the validation has teeth: small
// mistakes in the template must fail it.
func TestTemplateSchemaRejects(t *testing.T) {
	t.Parallel()
	schema := samSchema(t)
	mutations := map[string]func(tmpl map[string]any){
		"Architecture instead of Architectures": func(tmpl map[string]any) {
			asMap(dig(tmpl, "Resources", "CreateJobFunction", "Properties"))["Architecture"] = "arm64"
		},
		"PayloadFormat in an HttpApi event": func(tmpl map[string]any) {
			asMap(dig(tmpl, "Resources", "CreateJobFunction", "Properties", "Events", "Api", "Properties"))["PayloadFormat"] = "2.0"
		},
		"Schedule under ScheduleV2": func(tmpl map[string]any) {
			asMap(dig(tmpl, "Resources", "SweepTimeoutsFunction", "Properties", "Events", "Tick", "Properties"))["Schedule"] = "rate(1 minute)"
		},
		"unknown Globals.Function key": func(tmpl map[string]any) {
			asMap(dig(tmpl, "Globals", "Function"))["Policies"] = []any{"AWSLambdaRole"}
		},
		"bad HttpApi Auth": func(tmpl map[string]any) {
			asMap(dig(tmpl, "Resources", "QueueApi", "Properties"))["Auth"] = map[string]any{"EnableIamAuthorizer": "yes"}
		},
		"Serverless type with Properties of another": func(tmpl map[string]any) {
			asMap(dig(tmpl, "Resources", "CacheConnectPolicy"))["Type"] = "AWS::Serverless::Function"
		},
	}
	for name, mutate := range mutations {
		tmpl, err := resolveLanguageExtensions(loadTemplate(t), templateVariants["IAM redis"])
		if err != nil {
			t.Fatal(err)
		}
		mutate(tmpl)
		if err := schema.Validate(toJSON(t, tmpl)); err == nil {
			t.Errorf("%s: the mutated template validates, want an error", name)
		}
	}
}

// TestSamconfig checks samconfig.toml: TOML, version 0.1, an unattended
// default deploy, a confirming one in the prod environment, and the
// settings the README relies on.
func TestSamconfig(t *testing.T) {
	t.Parallel()
	var cfg map[string]any
	md, err := toml.DecodeFile(filepath.Join(deploytest.RepoRoot(t), "samconfig.toml"), &cfg)
	if err != nil {
		t.Fatalf("samconfig.toml: %v", err)
	}
	if !md.IsDefined("version") || cfg["version"] != 0.1 {
		t.Errorf("version = %v, want 0.1", cfg["version"])
	}
	section := func(env, cmd string) map[string]any {
		return asMap(dig(cfg, env, cmd, "parameters"))
	}
	for env, confirm := range map[string]bool{"default": false, "prod": true} {
		deploy := section(env, "deploy")
		if deploy == nil {
			t.Errorf("no [%s.deploy.parameters]", env)
			continue
		}
		if deploy["confirm_changeset"] != confirm {
			t.Errorf("%s: confirm_changeset = %v, want %v", env, deploy["confirm_changeset"], confirm)
		}
		caps, _ := deploy["capabilities"].(string)
		if !slices.Contains(strings.Fields(caps), "CAPABILITY_IAM") || !slices.Contains(strings.Fields(caps), "CAPABILITY_AUTO_EXPAND") {
			t.Errorf("%s: capabilities = %q, want CAPABILITY_IAM (SAM's roles) and CAPABILITY_AUTO_EXPAND (two transforms)", env, caps)
		}
		if deploy["resolve_s3"] != true {
			t.Errorf("%s: resolve_s3 is not true", env)
		}
		if name, _ := dig(cfg, env, "global", "parameters", "stack_name").(string); name == "" {
			t.Errorf("%s: no stack_name", env)
		}
	}
	// A CI run that changes nothing must not fail.
	if section("default", "deploy")["fail_on_empty_changeset"] != false {
		t.Error("default.deploy: fail_on_empty_changeset is not false")
	}
	// SAM CLI must resolve the template's !If (AWS::LanguageExtensions) itself for local work.
	for _, cmd := range []string{"build", "validate", "local_start_api", "local_invoke"} {
		if section("default", cmd)["language_extensions"] != true {
			t.Errorf("default.%s.parameters.language_extensions is not true", cmd)
		}
	}
	if got := section("default", "local_start_api")["env_vars"]; got != "events/local-env.json" {
		t.Errorf("local_start_api env_vars = %v, want events/local-env.json", got)
	}
	// Every parameter override names a template parameter, and every
	// parameter without a default gets a value wherever overrides are given.
	tmpl := loadTemplate(t)
	params := asMap(tmpl["Parameters"])
	for env, cmds := range cfg {
		for cmd := range asMap(cmds) {
			overrides, ok := section(env, cmd)["parameter_overrides"].(string)
			if !ok {
				continue
			}
			given := map[string]string{}
			for _, kv := range strings.Fields(overrides) {
				name, value, _ := strings.Cut(kv, "=")
				if _, ok := params[name]; !ok {
					t.Errorf("%s.%s parameter_overrides names %q, which template.yaml does not declare", env, cmd, name)
				}
				given[name] = value
			}
			for name, p := range params {
				if _, ok := asMap(p)["Default"]; !ok && given[name] == "" {
					t.Errorf("%s.%s parameter_overrides lacks %s, which has no default", env, cmd, name)
				}
			}
			if fails, err := ruleFailures(tmpl, given); err != nil || len(fails) > 0 {
				t.Errorf("%s.%s parameter_overrides break the template's rules: %v %q", env, cmd, err, fails)
			}
		}
	}
}
