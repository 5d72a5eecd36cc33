package deploytest_test

import (
	"fmt"
	"slices"
	"strings"
)

// evalString evaluates the string functions CloudFormation applies to a
// resource property after the transforms: Ref (parameters), Fn::Join,
// Fn::Select and Fn::Split. A list comes back as []string.
func evalString(x any, values map[string]string) (any, error) {
	switch x := x.(type) {
	case string:
		return x, nil
	case map[string]any:
		if len(x) != 1 {
			return nil, fmt.Errorf("not a function: %v", x)
		}
		for fn, arg := range x {
			args, _ := arg.([]any)
			switch fn {
			case "Ref":
				v, ok := values[fmt.Sprint(arg)]
				if !ok {
					return nil, fmt.Errorf("no value for parameter %v", arg)
				}
				return v, nil
			case "Fn::Join":
				if len(args) != 2 {
					return nil, fmt.Errorf("Fn::Join needs 2 arguments: %v", arg)
				}
				list, _ := args[1].([]any)
				if ref, ok := args[1].(map[string]any); ok {
					// A CommaDelimitedList parameter: its value is the
					// list with commas.
					v, err := evalString(ref, values)
					if err != nil {
						return nil, err
					}
					return strings.Join(strings.Split(fmt.Sprint(v), ","), fmt.Sprint(args[0])), nil
				}
				var parts []string
				for _, item := range list {
					v, err := evalString(item, values)
					if err != nil {
						return nil, err
					}
					s, ok := v.(string)
					if !ok {
						return nil, fmt.Errorf("Fn::Join of a non-string %v", v)
					}
					parts = append(parts, s)
				}
				return strings.Join(parts, fmt.Sprint(args[0])), nil
			case "Fn::Split":
				if len(args) != 2 {
					return nil, fmt.Errorf("Fn::Split needs 2 arguments: %v", arg)
				}
				v, err := evalString(args[1], values)
				if err != nil {
					return nil, err
				}
				return strings.Split(fmt.Sprint(v), fmt.Sprint(args[0])), nil
			case "Fn::Select":
				if len(args) != 2 {
					return nil, fmt.Errorf("Fn::Select needs 2 arguments: %v", arg)
				}
				v, err := evalString(args[1], values)
				if err != nil {
					return nil, err
				}
				list, ok := v.([]string)
				i, iok := args[0].(int)
				if !ok || !iok || i < 0 || i >= len(list) {
					return nil, fmt.Errorf("Fn::Select %v of %v: out of range", args[0], v)
				}
				return list[i], nil
			}
			return nil, fmt.Errorf("unsupported function %s", fn)
		}
	}
	return nil, fmt.Errorf("cannot evaluate %#v", x)
}

// ruleFailures evaluates the template's Rules for the parameter values as
// CloudFormation does before it touches any resource, and returns the
// AssertDescription of every failed assertion. Only the rule functions
// the template may use are known: Ref, Fn::Equals, Fn::Not, Fn::And,
// Fn::Or, Fn::Contains.
func ruleFailures(tmpl map[string]any, params map[string]string) ([]string, error) {
	values := paramValues(tmpl, params)
	var eval func(x any) (any, error)
	eval = func(x any) (any, error) {
		m, ok := x.(map[string]any)
		if !ok {
			return fmt.Sprint(x), nil
		}
		if len(m) != 1 {
			return nil, fmt.Errorf("not a rule function: %v", x)
		}
		for fn, arg := range m {
			args, _ := arg.([]any)
			switch fn {
			case "Ref":
				v, ok := values[fmt.Sprint(arg)]
				if !ok {
					return nil, fmt.Errorf("Ref %v: no such parameter or no value", arg)
				}
				return v, nil
			case "Fn::Equals":
				if len(args) != 2 {
					return nil, fmt.Errorf("Fn::Equals needs 2 arguments: %v", arg)
				}
				a, err := eval(args[0])
				if err != nil {
					return nil, err
				}
				b, err := eval(args[1])
				return a == b, err
			case "Fn::Not":
				if len(args) != 1 {
					return nil, fmt.Errorf("Fn::Not needs 1 argument: %v", arg)
				}
				b, err := eval(args[0])
				return b == false, err
			case "Fn::And", "Fn::Or":
				if len(args) < 2 || len(args) > 10 {
					return nil, fmt.Errorf("%s takes 2 to 10 conditions: %v", fn, arg)
				}
				and := fn == "Fn::And"
				result := and
				for _, a := range args {
					b, err := eval(a)
					if err != nil {
						return nil, err
					}
					if b == !and {
						result = !and
					}
				}
				return result, nil
			case "Fn::Contains":
				if len(args) != 2 {
					return nil, fmt.Errorf("Fn::Contains needs 2 arguments: %v", arg)
				}
				s, err := eval(args[1])
				if err != nil {
					return nil, err
				}
				return slices.Contains(anyStrings(args[0]), fmt.Sprint(s)), nil
			}
			return nil, fmt.Errorf("%s is not a rule function (Rules take only Ref and rule functions)", fn)
		}
		panic("unreachable")
	}
	var failed []string
	for name, r := range asMap(tmpl["Rules"]) {
		rule := asMap(r)
		if c, ok := rule["RuleCondition"]; ok {
			b, err := eval(c)
			if err != nil {
				return nil, fmt.Errorf("rule %s: %w", name, err)
			}
			if b != true {
				continue
			}
		}
		list, _ := rule["Assertions"].([]any)
		if len(list) == 0 {
			return nil, fmt.Errorf("rule %s has no Assertions", name)
		}
		for _, a := range list {
			b, err := eval(asMap(a)["Assert"])
			if err != nil {
				return nil, fmt.Errorf("rule %s: %w", name, err)
			}
			if b != true {
				failed = append(failed, fmt.Sprint(asMap(a)["AssertDescription"]))
			}
		}
	}
	slices.Sort(failed)
	return failed, nil
}

// mergeGlobals returns a resource's properties with the template's
// Globals.Function merged in as SAM merges them: maps recursively (the
// resource wins on a conflict), lists appended, an intrinsic function
// treated as a single value.
func mergeGlobals(tmpl map[string]any, res map[string]any) map[string]any {
	var merge func(g, l any) any
	merge = func(g, l any) any {
		gm, gok := g.(map[string]any)
		lm, lok := l.(map[string]any)
		if gok && lok && !isIntrinsic(gm) && !isIntrinsic(lm) {
			out := map[string]any{}
			for k, v := range gm {
				out[k] = v
			}
			for k, v := range lm {
				if gv, ok := out[k]; ok {
					out[k] = merge(gv, v)
				} else {
					out[k] = v
				}
			}
			return out
		}
		gl, gok := g.([]any)
		ll, lok := l.([]any)
		if gok && lok {
			return append(append([]any(nil), gl...), ll...)
		}
		return l
	}
	return merge(asMap(dig(tmpl, "Globals", "Function")), asMap(res["Properties"])).(map[string]any)
}

// isIntrinsic reports whether m is a function call such as {"Ref": x}.
func isIntrinsic(m map[string]any) bool {
	if len(m) != 1 {
		return false
	}
	for k := range m {
		return k == "Ref" || k == "Condition" || strings.HasPrefix(k, "Fn::")
	}
	return false
}
