package deploytest_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ocyless/ocyless/shared/deploytest"
)

// decodeCFN parses a CloudFormation YAML template into generic JSON-like
// values, turning short-form tags into their long forms: !Ref x becomes
// {"Ref": x}, !GetAtt a.b becomes {"Fn::GetAtt": ["a", "b"]}, !Condition c
// becomes {"Condition": c} and every other !Name becomes {"Fn::Name": ...}.
func decodeCFN(data []byte) (map[string]any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	v, err := cfnValue(&doc)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("template is a %T, want a mapping", v)
	}
	return m, nil
}

func cfnValue(n *yaml.Node) (any, error) {
	var v any
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return cfnValue(n.Content[0])
	case yaml.AliasNode:
		return cfnValue(n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: non-scalar key", k.Line)
			}
			if _, dup := m[k.Value]; dup {
				return nil, fmt.Errorf("line %d: duplicate key %q", k.Line, k.Value)
			}
			x, err := cfnValue(val)
			if err != nil {
				return nil, err
			}
			m[k.Value] = x
		}
		v = m
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			x, err := cfnValue(c)
			if err != nil {
				return nil, err
			}
			s = append(s, x)
		}
		v = s
	case yaml.ScalarNode:
		if isCustomTag(n.Tag) {
			v = n.Value
		} else if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
	}
	if !isCustomTag(n.Tag) {
		return v, nil
	}
	switch name := strings.TrimPrefix(n.Tag, "!"); name {
	case "Ref", "Condition":
		return map[string]any{name: v}, nil
	case "GetAtt":
		if s, ok := v.(string); ok {
			res, attr, _ := strings.Cut(s, ".")
			v = []any{res, attr}
		}
		return map[string]any{"Fn::GetAtt": v}, nil
	default:
		return map[string]any{"Fn::" + name: v}, nil
	}
}

func isCustomTag(tag string) bool {
	return strings.HasPrefix(tag, "!") && !strings.HasPrefix(tag, "!!")
}

// loadTemplate reads and decodes the repository's template.yaml.
func loadTemplate(t testing.TB) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(deploytest.RepoRoot(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := decodeCFN(data)
	if err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	return tmpl
}

// resolveLanguageExtensions returns a copy of tmpl with every Fn::If
// resolved for the parameter values params (the parameters' defaults
// otherwise), and the AWS::NoValue branches removed. That is what the
// AWS::LanguageExtensions transform does before the SAM transform, so the
// result is what SAM, and its schema, get to see.
func resolveLanguageExtensions(tmpl map[string]any, params map[string]string) (map[string]any, error) {
	values := paramValues(tmpl, params)
	conds := asMap(tmpl["Conditions"])
	memo := map[string]bool{}
	var cond func(name string) (bool, error)
	var eval func(x any) (bool, error)
	scalar := func(x any) (string, error) {
		if m, ok := x.(map[string]any); ok {
			ref, ok := m["Ref"].(string)
			if v, known := values[ref]; ok && known && len(m) == 1 {
				return v, nil
			}
			// A CommaDelimitedList parameter joined: its value is the
			// list with commas.
			if j, ok := m["Fn::Join"].([]any); ok && len(m) == 1 && len(j) == 2 {
				delim, _ := j[0].(string)
				lref, _ := asMap(j[1])["Ref"].(string)
				if v, known := values[lref]; known && len(asMap(j[1])) == 1 {
					return strings.Join(strings.Split(v, ","), delim), nil
				}
			}
			return "", fmt.Errorf("cannot resolve %v", x)
		}
		return fmt.Sprint(x), nil
	}
	eval = func(x any) (bool, error) {
		m := asMap(x)
		if len(m) != 1 {
			return false, fmt.Errorf("not a condition: %v", x)
		}
		for fn, arg := range m {
			args, _ := arg.([]any)
			switch fn {
			case "Condition":
				return cond(fmt.Sprint(arg))
			case "Fn::Equals":
				if len(args) != 2 {
					return false, fmt.Errorf("Fn::Equals needs 2 arguments: %v", arg)
				}
				a, err := scalar(args[0])
				if err != nil {
					return false, err
				}
				b, err := scalar(args[1])
				return a == b, err
			case "Fn::Not":
				if len(args) != 1 {
					return false, fmt.Errorf("Fn::Not needs 1 argument: %v", arg)
				}
				b, err := eval(args[0])
				return !b, err
			case "Fn::And", "Fn::Or":
				and := fn == "Fn::And"
				for _, a := range args {
					b, err := eval(a)
					if err != nil {
						return false, err
					}
					if b != and {
						return b, nil
					}
				}
				return and, nil
			}
			return false, fmt.Errorf("unsupported condition function %s", fn)
		}
		panic("unreachable")
	}
	cond = func(name string) (bool, error) {
		if b, ok := memo[name]; ok {
			return b, nil
		}
		c, ok := conds[name]
		if !ok {
			return false, fmt.Errorf("unknown condition %q", name)
		}
		b, err := eval(c)
		memo[name] = b
		return b, err
	}
	var resolve func(x any) (any, bool, error) // value, keep, error
	resolve = func(x any) (any, bool, error) {
		switch x := x.(type) {
		case map[string]any:
			if ifArgs, ok := x["Fn::If"].([]any); ok && len(x) == 1 {
				if len(ifArgs) != 3 {
					return nil, false, fmt.Errorf("Fn::If needs 3 arguments: %v", ifArgs)
				}
				b, err := cond(fmt.Sprint(ifArgs[0]))
				if err != nil {
					return nil, false, err
				}
				branch := ifArgs[2]
				if b {
					branch = ifArgs[1]
				}
				return resolve(branch)
			}
			if fargs, ok := x["Fn::FindInMap"].([]any); ok && len(x) == 1 {
				return findInMap(tmpl, fargs, scalar)
			}
			if ref, ok := x["Ref"]; ok && len(x) == 1 && ref == "AWS::NoValue" {
				return nil, false, nil
			}
			out := make(map[string]any, len(x))
			for k, v := range x {
				r, keep, err := resolve(v)
				if err != nil {
					return nil, false, fmt.Errorf("%s: %w", k, err)
				}
				if keep {
					out[k] = r
				}
			}
			return out, true, nil
		case []any:
			out := make([]any, 0, len(x))
			for _, v := range x {
				r, keep, err := resolve(v)
				if err != nil {
					return nil, false, err
				}
				if keep {
					out = append(out, r)
				}
			}
			return out, true, nil
		}
		return x, true, nil
	}
	out := make(map[string]any, len(tmpl))
	for k, v := range tmpl {
		if k == "Conditions" || k == "Rules" {
			out[k] = v
			continue
		}
		r, keep, err := resolve(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		if keep {
			out[k] = r
		}
	}
	return out, nil
}

// asMap returns x as an object, or nil.
func asMap(x any) map[string]any {
	m, _ := x.(map[string]any)
	return m
}

// dig walks nested objects: dig(m, "a", "b") is m["a"]["b"], or nil.
func dig(x any, path ...string) any {
	for _, p := range path {
		x = asMap(x)[p]
	}
	return x
}

// toJSON round-trips v through encoding/json, giving the value types a JSON
// schema validator expects (float64 numbers, []any, map[string]any).
func toJSON(t testing.TB, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// paramValues returns every parameter's value: params, else its default.
func paramValues(tmpl map[string]any, params map[string]string) map[string]string {
	values := map[string]string{}
	for name, p := range asMap(tmpl["Parameters"]) {
		if d, ok := asMap(p)["Default"]; ok {
			values[name] = fmt.Sprint(d)
		}
	}
	for k, v := range params {
		values[k] = v
	}
	return values
}

// anyStrings returns x as a list of strings (a lone string is a list of one).
func anyStrings(x any) []string {
	switch x := x.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, v := range x {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// findInMap is Fn::FindInMap as AWS::LanguageExtensions resolves it: keys
// may be parameter references, and a fourth argument {DefaultValue: v}
// answers for a key the mapping lacks.
func findInMap(tmpl map[string]any, args []any, scalar func(any) (string, error)) (any, bool, error) {
	if len(args) != 3 && len(args) != 4 {
		return nil, false, fmt.Errorf("Fn::FindInMap needs 3 or 4 arguments: %v", args)
	}
	var keys [3]string
	for i := range keys {
		k, err := scalar(args[i])
		if err != nil {
			return nil, false, err
		}
		keys[i] = k
	}
	if v, ok := asMap(asMap(asMap(tmpl["Mappings"])[keys[0]])[keys[1]])[keys[2]]; ok {
		return v, true, nil
	}
	if len(args) == 4 {
		if v, ok := asMap(args[3])["DefaultValue"]; ok {
			return v, true, nil
		}
	}
	return nil, false, fmt.Errorf("Fn::FindInMap %v: no such entry and no DefaultValue", keys)
}
