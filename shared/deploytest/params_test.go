package deploytest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ocyless/ocyless/shared/deploytest"
)

// TestTemplateParameterDefaults: every parameter default satisfies its own
// AllowedPattern and AllowedValues (CloudFormation would reject the stack).
func TestTemplateParameterDefaults(t *testing.T) {
	t.Parallel()
	for name, p := range asMap(loadTemplate(t)["Parameters"]) {
		def, ok := asMap(p)["Default"]
		if !ok {
			continue
		}
		d := fmt.Sprint(def)
		if pat, ok := asMap(p)["AllowedPattern"].(string); ok && !regexp.MustCompile(pat).MatchString(d) {
			t.Errorf("%s: default %q does not match AllowedPattern %s", name, d, pat)
		}
		if vals := asMap(p)["AllowedValues"]; vals != nil {
			var allowed []string
			for _, v := range vals.([]any) {
				allowed = append(allowed, fmt.Sprint(v))
			}
			if !slices.Contains(allowed, d) {
				t.Errorf("%s: default %q is not among AllowedValues %v", name, d, vals)
			}
		}
	}
}

// TestReadmeParameters: docs/operations.md's parameter table lists every template
// parameter, and nothing else.
func TestReadmeParameters(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(deploytest.RepoRoot(t), "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(data)
	start := strings.Index(section, "\n## Deploying on AWS with SAM")
	if start < 0 {
		t.Fatal("docs/operations.md has no section \"Deploying on AWS with SAM\"")
	}
	section = section[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	documented := map[string]bool{}
	inTable := false
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "| Parameter |") {
			inTable = true
			continue
		}
		if inTable && !strings.HasPrefix(line, "|") {
			break
		}
		if inTable {
			cell := strings.SplitN(line, "|", 3)[1]
			for _, m := range regexp.MustCompile("`([A-Za-z]+)`").FindAllStringSubmatch(cell, -1) {
				documented[m[1]] = true
			}
		}
	}
	params := asMap(loadTemplate(t)["Parameters"])
	for name := range params {
		if !documented[name] {
			t.Errorf("docs/operations.md parameter table lacks %s", name)
		}
	}
	for name := range documented {
		if _, ok := params[name]; !ok {
			t.Errorf("docs/operations.md parameter table lists %s, which template.yaml does not declare", name)
		}
	}
}
