package config

import (
	"errors"
	"testing"
)

// env returns a getenv over m.
func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestInterpolate(t *testing.T) {
	t.Parallel()
	vars := env(map[string]string{
		"HOST": "0.0.0.0", "PORT": "9000", "EMPTY": "", "A1_B": "x", "QUOTE": `"`, "DOLLAR": "${HOST}",
	})
	tests := map[string]struct{ in, want string }{
		"plain":                {`host = "${HOST}"`, `host = "0.0.0.0"`},
		"default unused":       {`port = ${PORT=8023}`, `port = 9000`},
		"default used":         {`port = ${UNSET=8023}`, `port = 8023`},
		"empty default":        {`ns = "${UNSET=}"`, `ns = ""`},
		"set empty wins":       {`ns = "${EMPTY=fallback}"`, `ns = ""`},
		"per-occurrence":       {`${UNSET=1} ${UNSET=2}`, `1 2`},
		"digits underscores":   {`${A1_B}`, `x`},
		"lower case untouched": {`${host} ${Host} ${hOST=1}`, `${host} ${Host} ${hOST=1}`},
		"leading digit":        {`${1A}`, `${1A}`},
		"leading underscore":   {`${_A}`, `${_A}`},
		"no braces":            {`$HOST`, `$HOST`},
		"unterminated":         {`${HOST`, `${HOST`},
		"empty name":           {`${}`, `${}`},
		"dash":                 {`${A-B}`, `${A-B}`},
		"in comment":           {`# ${HOST}`, `# 0.0.0.0`},
		"in section name":      {`[queue.${UNSET=q1}]`, `[queue.q1]`},
		"raw, no escaping":     {`x = "${QUOTE}"`, `x = """`},
		"not recursive":        {`${DOLLAR}`, `${HOST}`},
		"default with spaces":  {`${UNSET=a b c}`, `a b c`},
		"default with =":       {`${UNSET=a=b}`, `a=b`},
		"default with $":       {`${UNSET=$x}`, `$x`},
		"adjacent":             {`${HOST}${PORT}`, `0.0.0.09000`},
		"multiline":            {"a=${HOST}\nb=${PORT}\n", "a=0.0.0.0\nb=9000\n"},
		"no variables":         {"nothing here", "nothing here"},
		"double dollar":        {`$${HOST}`, `$0.0.0.0`},
		"closing brace after":  {`${HOST}}`, `0.0.0.0}`},
	}
	for name, tt := range tests {
		got, err := Interpolate(tt.in, vars)
		if err != nil || got != tt.want {
			t.Errorf("%s: Interpolate(%q) = %q, %v; want %q, nil", name, tt.in, got, err, tt.want)
		}
	}
}

func TestInterpolateMissing(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		in   string
		want []string
	}{
		"one":                 {`${B}`, []string{"B"}},
		"sorted and deduped":  {`${B} ${A} ${B} ${C=1} ${A}`, []string{"A", "B"}},
		"default elsewhere":   {`${A=1} ${A}`, []string{"A"}},
		"lower not collected": {`${a} ${Z}`, []string{"Z"}},
	}
	for name, tt := range tests {
		_, err := Interpolate(tt.in, env(nil))
		var ie *InterpolationError
		if !errors.As(err, &ie) {
			t.Fatalf("%s: Interpolate(%q) error = %v, want *InterpolationError", name, tt.in, err)
		}
		if len(ie.Missing) != len(tt.want) {
			t.Fatalf("%s: Missing = %q, want %q", name, ie.Missing, tt.want)
		}
		for i := range tt.want {
			if ie.Missing[i] != tt.want[i] {
				t.Errorf("%s: Missing = %q, want %q", name, ie.Missing, tt.want)
			}
		}
	}
	_, err := Interpolate("${B} ${A} ${B}", nil)
	want := "could not interpolate environment variables into config, the following variables were not set: A, B"
	if err == nil || err.Error() != want {
		t.Errorf("Interpolate error = %v, want %q", err, want)
	}
}
