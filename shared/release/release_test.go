package release

import (
	"os"
	"regexp"
	"testing"
)

// TestChangelogNamesThisVersion keeps Version and CHANGELOG.md in step: the
// newest released section of the changelog is this version.
func TestChangelogNamesThisVersion(t *testing.T) {
	b, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("CHANGELOG.md has no released section `## [x.y.z] - YYYY-MM-DD`")
	}
	if got := string(m[1]); got != Version {
		t.Errorf("CHANGELOG.md's newest release is %s; release.Version is %s", got, Version)
	}
}
