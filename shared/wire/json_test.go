package wire

import (
	"strings"
	"testing"
)

func TestParseJSONErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		``:                     "EOF while parsing a value at line 1 column 0",
		`   `:                  "EOF while parsing a value at line 1 column 3",
		"\n\n":                 "EOF while parsing a value at line 3 column 0",
		`{`:                    "EOF while parsing an object at line 1 column 1",
		`{"a"`:                 "EOF while parsing an object at line 1 column 4",
		`{"a":`:                "EOF while parsing a value at line 1 column 5",
		`{"a":1`:               "EOF while parsing an object at line 1 column 6",
		`{"a":1,`:              "EOF while parsing a value at line 1 column 7",
		`{"a":1,}`:             "trailing comma at line 1 column 8",
		`{"a" 1}`:              "expected `:` at line 1 column 6",
		`{"a":1 "b":2}`:        "expected `,` or `}` at line 1 column 8",
		`{1:2}`:                "key must be a string at line 1 column 2",
		`{"a":1,2:3}`:          "key must be a string at line 1 column 8",
		`[`:                    "EOF while parsing a list at line 1 column 1",
		`[1`:                   "EOF while parsing a list at line 1 column 2",
		`[1,`:                  "EOF while parsing a value at line 1 column 3",
		`[1,]`:                 "trailing comma at line 1 column 4",
		`[1 2]`:                "expected `,` or `]` at line 1 column 4",
		`[,1]`:                 "expected value at line 1 column 2",
		`"abc`:                 "EOF while parsing a string at line 1 column 4",
		`"a\qb"`:               "invalid escape at line 1 column 4",
		`"\u12G4"`:             "invalid escape at line 1 column 6",
		`"\u12`:                "EOF while parsing a string at line 1 column 5",
		`"\ud800"`:             "unexpected end of hex escape at line 1 column 8",
		`"\ud800\u0041"`:       "lone leading surrogate in hex escape at line 1 column 13",
		`"\udc00"`:             "lone leading surrogate in hex escape at line 1 column 7",
		"\"tab\there\"":        "control character (\\u0000-\\u001F) found while parsing a string at line 1 column 5",
		"\"new\nline\"":        "control character (\\u0000-\\u001F) found while parsing a string at line 2 column 0",
		`01`:                   "invalid number at line 1 column 2",
		`-`:                    "EOF while parsing a value at line 1 column 1",
		`-a`:                   "invalid number at line 1 column 2",
		`1.`:                   "EOF while parsing a value at line 1 column 2",
		`1.e5`:                 "invalid number at line 1 column 3",
		`1e`:                   "EOF while parsing a value at line 1 column 2",
		`1e+`:                  "EOF while parsing a value at line 1 column 3",
		`1e400`:                "number out of range at line 1 column 5",
		`-1e400`:               "number out of range at line 1 column 6",
		`tru`:                  "EOF while parsing a value at line 1 column 3",
		`nul1`:                 "expected ident at line 1 column 4",
		`True`:                 "expected value at line 1 column 1",
		`NaN`:                  "expected value at line 1 column 1",
		`Infinity`:             "expected value at line 1 column 1",
		`'a'`:                  "expected value at line 1 column 1",
		`{} {}`:                "trailing characters at line 1 column 4",
		`1 2`:                  "trailing characters at line 1 column 3",
		"\ufeff{}":             "expected value at line 1 column 1",
		"{\"a\":\n  \"\xff\"}": "invalid unicode code point at line 2 column 4",
		"{\n\"a\":1,\n}":       "trailing comma at line 3 column 1",
		`{"a":1}/`:             "trailing characters at line 1 column 8",
		`/* c */ {}`:           "expected value at line 1 column 1",
		strings.Repeat("[", 127) + strings.Repeat("]", 127): "",
		strings.Repeat("[", 128):                            "recursion limit exceeded at line 1 column 128",
		strings.Repeat(`{"a":`, 200):                        "recursion limit exceeded at line 1 column 636",
	}
	for in, want := range tests {
		_, err := Parse([]byte(in))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("Parse(%.40q) error = %q, want %q", in, got, want)
		}
	}
}

func TestCanonical(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		`null`:                                   `null`,
		` true `:                                 `true`,
		`false`:                                  `false`,
		`0`:                                      `0`,
		`-0`:                                     `-0`,
		`1.50`:                                   `1.50`,
		`1e2`:                                    `1e2`,
		`-1.5E-7`:                                `-1.5E-7`,
		`123456789012345678901234567890`:         `123456789012345678901234567890`,
		`"x\u0041\/\"\\"`:                        `"xA/\"\\"`,
		`"\b\f\n\r\t\u0001\u001f\u007f"`:         `"\b\f\n\r\t\u0001\u001f` + "\x7f\"",
		`"\ud83d\ude00 \u00e9 \u2028"`:           "\"😀 é \u2028\"",
		`"<&>"`:                                  `"<&>"`,
		`[ 1 , [ ] , { } ]`:                      `[1,[],{}]`,
		`{"b":1,"a":{"d":[1,2.50,1e2],"c":"x"}}`: `{"a":{"c":"x","d":[1,2.50,1e2]},"b":1}`,
		`{"a":1,"a":2}`:                          `{"a":2}`,
		`{"b":1,"a":2,"b":3,"a":4}`:              `{"a":4,"b":3}`,
		`{"é":1,"z":2,"A":3,"":4}`:               `{"":4,"A":3,"z":2,"é":1}`,
		"{\"k\"\n:\r\n\t\"v\"}":                  `{"k":"v"}`,
	}
	for in, want := range tests {
		v, err := Parse([]byte(in))
		if err != nil {
			t.Errorf("Parse(%q) error = %v", in, err)
			continue
		}
		if got := string(AppendCanonical(nil, &v)); got != want {
			t.Errorf("Canonical(%q) = %q, want %q", in, got, want)
		}
	}
	v, _ := Parse([]byte(`null`))
	if got := Canonical(&v); got != nil {
		t.Errorf("Canonical(null) = %q, want nil", got)
	}
}

func TestAppendString(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":          `""`,
		"plain":     `"plain"`,
		"a\"b\\c":   `"a\"b\\c"`,
		"\x00\x1f":  `"\u0000\u001f"`,
		"bad\xffx":  "\"bad\uFFFDx\"",
		"</script>": `"</script>"`,
	} {
		if got := string(AppendString(nil, in)); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", in, got, want)
		}
	}
}
