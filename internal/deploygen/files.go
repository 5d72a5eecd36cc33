package deploygen

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Plan is every generated file, by path relative to the repository root.
type Plan struct {
	// Files are rewritten whenever they differ.
	Files map[string][]byte
	// Samples are written only where no file exists: a sample event is
	// edited by hand once created.
	Samples map[string][]byte
}

// Generate derives the plan from in; template.yaml is read from root and
// its generated section replaced.
func Generate(root string, in Input) (Plan, error) {
	fs, err := Functions(in)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Files: map[string][]byte{}, Samples: map[string][]byte{}}
	for _, f := range fs {
		src, err := mainGo(f, in)
		if err != nil {
			return Plan{}, fmt.Errorf("%s/main.go: %w", f.Dir, err)
		}
		p.Files[f.Dir+"/main.go"] = src
		if f.Route != nil {
			if p.Samples[f.Event], err = skeletonEvent(f); err != nil {
				return Plan{}, err
			}
			if p.Files[AlbEventPath(f.Route.Name)], err = albSample(root, f); err != nil {
				return Plan{}, err
			}
		} else {
			p.Samples[f.Event] = []byte(sweepInput(f) + "\n")
		}
	}
	p.Files[MakefileInclude] = makefileInclude(fs)
	tmpl, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		return Plan{}, err
	}
	if p.Files["template.yaml"], err = replaceSection(tmpl, templateSection(fs)); err != nil {
		return Plan{}, err
	}
	return p, nil
}

// replaceSection swaps the lines from BeginMarker to EndMarker (both
// included) for section.
func replaceSection(tmpl []byte, section string) ([]byte, error) {
	lines := strings.SplitAfter(string(tmpl), "\n")
	begin, end := -1, -1
	for i, l := range lines {
		switch strings.TrimRight(l, "\r\n") {
		case BeginMarker:
			if begin >= 0 {
				return nil, errors.New("template.yaml: two BEGIN GENERATED FUNCTIONS markers")
			}
			begin = i
		case EndMarker:
			if end >= 0 {
				return nil, errors.New("template.yaml: two END GENERATED FUNCTIONS markers")
			}
			end = i
		}
	}
	if begin < 0 || end < begin {
		return nil, fmt.Errorf("template.yaml: want the lines %q and %q, in this order, around the generated functions", BeginMarker, EndMarker)
	}
	var b bytes.Buffer
	for _, l := range lines[:begin] {
		b.WriteString(l)
	}
	b.WriteString(section)
	for _, l := range lines[end+1:] {
		b.WriteString(l)
	}
	return b.Bytes(), nil
}

// stale lists the generated mains under root that the plan no longer has:
// the function of a route or sweep kind that was removed.
func (p Plan) stale(root string) ([]string, error) {
	var out []string
	for _, dir := range []string{"functions", "sweeper"} {
		entries, err := os.ReadDir(filepath.Join(root, dir))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			rel := dir + "/" + e.Name() + "/main.go"
			if _, planned := p.Files[rel]; planned || !e.IsDir() {
				continue
			}
			data, err := os.ReadFile(filepath.Join(root, rel))
			if err == nil && bytes.HasPrefix(data, []byte(Header+"\n")) {
				out = append(out, rel)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// Write brings root up to date with the plan and returns the paths it
// created, changed or removed.
func (p Plan) Write(root string) ([]string, error) {
	var changed []string
	for _, rel := range sortedKeys(p.Files) {
		path := filepath.Join(root, rel)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, p.Files[rel]) {
			continue
		}
		if err := writeFile(path, p.Files[rel]); err != nil {
			return changed, err
		}
		changed = append(changed, rel)
	}
	for _, rel := range sortedKeys(p.Samples) {
		path := filepath.Join(root, rel)
		if _, err := os.Stat(path); err == nil {
			continue
		}
		if err := writeFile(path, p.Samples[rel]); err != nil {
			return changed, err
		}
		changed = append(changed, rel+" (skeleton: edit it into a useful sample)")
	}
	stale, err := p.stale(root)
	if err != nil {
		return changed, err
	}
	for _, rel := range stale {
		if err := os.Remove(filepath.Join(root, rel)); err != nil {
			return changed, err
		}
		_ = os.Remove(filepath.Dir(filepath.Join(root, rel))) // only if now empty
		changed = append(changed, rel+" (removed)")
	}
	return changed, nil
}

// Check compares root with the plan and describes every difference;
// nothing means up to date.
func (p Plan) Check(root string) ([]string, error) {
	var problems []string
	for _, rel := range sortedKeys(p.Files) {
		old, err := os.ReadFile(filepath.Join(root, rel))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			problems = append(problems, rel+" is missing")
		case err != nil:
			return nil, err
		case !bytes.Equal(old, p.Files[rel]):
			problems = append(problems, rel+" differs from what the route table generates")
		}
	}
	for _, rel := range sortedKeys(p.Samples) {
		if _, err := os.Stat(filepath.Join(root, rel)); errors.Is(err, fs.ErrNotExist) {
			problems = append(problems, rel+" is missing (a sample event for every function)")
		} else if err != nil {
			return nil, err
		}
	}
	stale, err := p.stale(root)
	if err != nil {
		return nil, err
	}
	for _, rel := range stale {
		problems = append(problems, rel+" belongs to no route or sweep kind")
	}
	return problems, nil
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
