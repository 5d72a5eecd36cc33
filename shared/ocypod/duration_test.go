package ocypod

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	// Vectors from the reference (§2.3).
	tests := map[uint64]string{
		0:             "0s",
		1:             "1s",
		135:           "2m 15s",
		300:           "5m",
		5400:          "1h 30m",
		12_420:        "3h 27m",
		86_400:        "1day",
		172_800:       "2days",
		604_800:       "7days",
		1_000_000:     "11days 13h 46m 40s",
		1_246_656:     "14days 10h 17m 36s",
		2_630_016:     "1month",
		5_260_032:     "2months",
		31_557_600:    "1year",
		63_115_200:    "2years",
		1_234_567_890: "39years 1month 13days 18h 57m 54s",
	}
	for secs, want := range tests {
		if got := Seconds(secs).String(); got != want {
			t.Errorf("Seconds(%d).String() = %q, want %q", secs, got, want)
		}
	}
	if got := (Duration{Secs: 1, Nanos: 1_002_003}).String(); got != "1s 1ms 2us 3ns" {
		t.Errorf("sub-second format = %q", got)
	}
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	tests := map[string]Duration{
		"0s":           {},
		"1s":           Seconds(1),
		"90s":          Seconds(90),
		"5m":           Seconds(300),
		"1h15m5s":      Seconds(4505),
		"1h 15m 5s":    Seconds(4505),
		"  1h 15m 5s ": Seconds(4505),
		"3w2d":         Seconds(3*604_800 + 2*86_400),
		"2h 37min":     Seconds(2*3600 + 37*60),
		"1 0s":         Seconds(10),
		"1day":         Seconds(86_400),
		"2days":        Seconds(172_800),
		"1M":           Seconds(2_630_016),
		"1y":           Seconds(31_557_600),
		"1500ms":       {Secs: 1, Nanos: 500_000_000},
		"500ms":        {Nanos: 500_000_000},
		"999ms 1ms":    Seconds(1),
		"1us":          {Nanos: 1000},
		"7nanos":       {Nanos: 7},
		"1hour":        Seconds(3600),
		"2 hrs":        Seconds(7200),
		"10 seconds":   Seconds(10),
		"007s":         Seconds(7),
	}
	for in, want := range tests {
		got, err := ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
}

func TestParseDurationErrors(t *testing.T) {
	t.Parallel()
	unknown := `unknown time unit "x", supported units: ns, us, ms, sec, min, hours, days, weeks, months, years (and few variations)`
	tests := map[string]string{
		"":                         "value was empty",
		"   ":                      "value was empty",
		"0":                        "time unit needed, for example 0sec or 0ms",
		"12":                       "time unit needed, for example 12sec or 12ms",
		"1x":                       unknown,
		"-1s":                      "expected number at 0",
		"1s-":                      "invalid character at 2",
		"1.5s":                     "invalid character at 1",
		"s":                        "expected number at 0",
		"1S":                       `unknown time unit "S", supported units: ns, us, ms, sec, min, hours, days, weeks, months, years (and few variations)`,
		"99999999999999999999s":    "number is too large",
		"9999999999999999999years": "number is too large",
		"18446744073709551615s 1s": "number is too large",
		"1s 2":                     "time unit needed, for example 2sec or 2ms",
		"1s x":                     "expected number at 3",
		"5m\u00e9":                 "invalid character at 2",
	}
	for in, want := range tests {
		_, err := ParseDuration(in)
		if err == nil || err.Error() != want {
			t.Errorf("ParseDuration(%q) error = %v, want %q", in, err, want)
		}
	}
}

func TestDurationJSON(t *testing.T) {
	t.Parallel()
	var d Duration
	if err := json.Unmarshal([]byte(`"1h 30m"`), &d); err != nil || d != Seconds(5400) {
		t.Fatalf("Unmarshal = %+v, %v", d, err)
	}
	b, err := json.Marshal(Seconds(5400))
	if err != nil || string(b) != `"1h 30m"` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	for _, bad := range []string{`30`, `null`, `[]`, `{}`, `true`, `3.5`, `"nope"`} {
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("Unmarshal(%s) succeeded", bad)
		}
	}
	if err := json.Unmarshal([]byte(`30`), &d); err == nil || !strings.Contains(err.Error(), "integer `30`") {
		t.Errorf("Unmarshal(30) error = %v, want it to name the integer", err)
	}
}

func TestDurationStd(t *testing.T) {
	t.Parallel()
	if got := (Duration{Secs: 1, Nanos: 5}).Std(); got != time.Second+5 {
		t.Errorf("Std = %v", got)
	}
	if got := Seconds(1 << 62).Std(); got <= 0 {
		t.Errorf("huge Std = %v, want saturation", got)
	}
	if got := FromStd(1500 * time.Millisecond); got != (Duration{Secs: 1, Nanos: 500_000_000}) {
		t.Errorf("FromStd = %+v", got)
	}
	if got := FromStd(-time.Second); !got.IsZero() {
		t.Errorf("FromStd(negative) = %+v", got)
	}
	if got := (Duration{Secs: 3, Nanos: 9}).Truncate(); got != Seconds(3) {
		t.Errorf("Truncate = %+v", got)
	}
}

// FuzzDuration checks that no input panics and that every formatted
// duration parses back to itself.
func FuzzDuration(f *testing.F) {
	for _, s := range []string{"0s", "1h 30m", "14days 10h 17m 36s", "1 0s", "-1s", "1x", "", "3w2d", "1500ms", "\u00a05m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		back, err := ParseDuration(d.String())
		if err != nil || back != d {
			t.Fatalf("ParseDuration(%q) = %+v, formatted %q parses to %+v, %v", s, d, d.String(), back, err)
		}
	})
}
