package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckRepository: `gen-deploy -check` passes on the committed tree
// and fails, naming the file and the fix, once a generated file drifts.
func TestCheckRepository(t *testing.T) {
	t.Parallel()
	if err := run("../..", true, io.Discard); err != nil {
		t.Fatalf("gen-deploy -check on the repository: %v", err)
	}
	dir := t.TempDir()
	for _, rel := range []string{"template.yaml", "shared/sweep/sweep.go"} {
		data, err := os.ReadFile(filepath.Join("../..", rel))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := run(dir, true, io.Discard); err == nil || !strings.Contains(err.Error(), "run make generate") {
		t.Errorf("gen-deploy -check on a tree without generated files = %v, want an error saying run make generate", err)
	}
	if err := run(dir, false, io.Discard); err != nil {
		t.Fatalf("gen-deploy: %v", err)
	}
	if err := run(dir, true, io.Discard); err != nil {
		t.Errorf("gen-deploy -check after gen-deploy: %v", err)
	}
}
