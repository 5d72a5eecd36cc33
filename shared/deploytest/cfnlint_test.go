package deploytest_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocyless/ocyless/shared/deploytest"
)

// TestCfnLint runs stock cfn-lint on the template where it is installed
// (pip install cfn-lint): no error and no warning. Its SAM transform step
// sees parameters at their defaults and resolves neither !If nor
// conditions in SAM properties, so the template's switches must be
// readable that way (TestTemplateSecureByDefault checks each value).
func TestCfnLint(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("cfn-lint")
	if err != nil {
		t.Skip("cfn-lint is not installed (pip install cfn-lint): the template is not linted by it here")
	}
	cmd := exec.CommandContext(t.Context(), bin, filepath.Join(deploytest.RepoRoot(t), "template.yaml"))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode()&(2|4) != 0 || err != nil && !errors.As(err, &exit) {
		t.Errorf("cfn-lint template.yaml: %v\n%s", err, out)
	}
}

// TestCfnLintPushVariants lints the template with the push parameters'
// other branches (lambda targets listed, no reservation, allowed hosts)
// written in as their defaults: cfn-lint's SAM step reads only defaults.
func TestCfnLintPushVariants(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("cfn-lint")
	if err != nil {
		t.Skip("cfn-lint is not installed (pip install cfn-lint): the template is not linted by it here")
	}
	raw, err := os.ReadFile(filepath.Join(deploytest.RepoRoot(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	for param, value := range map[string]string{
		"PushLambdaTargets":         pushTargets,
		"PushDispatcherConcurrency": "0",
		"PushAllowedHosts":          "api.example.com,hooks.example.org:8443",
		"AlarmTopicArn":             "arn:aws:sns:eu-west-1:123456789012:ocyless-alarms",
	} {
		text = withDefault(t, text, param, value)
	}
	path := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), bin, path).CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode()&(2|4) != 0 || err != nil && !errors.As(err, &exit) {
		t.Errorf("cfn-lint with the push variants: %v\n%s", err, out)
	}
}

// withDefault replaces the Default of parameter param in template text.
func withDefault(t *testing.T, text, param, value string) string {
	t.Helper()
	start := strings.Index(text, "\n  "+param+":\n")
	if start < 0 {
		t.Fatalf("no parameter %s", param)
	}
	rel := strings.Index(text[start:], "\n    Default: ")
	if rel < 0 {
		t.Fatalf("parameter %s has no Default", param)
	}
	at := start + rel + len("\n    Default: ")
	end := at + strings.Index(text[at:], "\n")
	return text[:at] + "'" + value + "'" + text[end:]
}
