package httpapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/wire"
)

// jsonSeeds are the fuzz seeds shared by the JSON fuzz tests. In a normal
// `go test` run only the seeds run, so the tests stay fast.
var jsonSeeds = []string{
	``, `null`, `0`, `-0`, `1.5e-7`, `1e999`, `01`, `"\ud83d\ude00"`, `"\ud800"`, `"a\u0000b"`,
	`[]`, `{}`, `[1,]`, `{"a":1,"a":2}`, `{"b":{"d":1,"c":[true,false,null]},"a":"é"}`,
	`{"timeout":"1h 30m","heartbeat_timeout":"0s","expires_after":"5m","retries":3,"retry_delays":["10s","1m"]}`,
	`{"input":{"z":[1,{"y":2}]},"tags":["a","b"],"timeout":"10s","retries":0,"retry_delays":[]}`,
	`{"status":"completed","output":{"progress":0.5}}`, `{"status":"foo"}`, `{"status":1}`,
	`{"retries":18446744073709551615}`, `{"retries":-1}`, `{"tags":[""]}`, `{"timeout":"99999999999999999999s"}`,
	"{\"a\":\"\xff\"}", "\ufeff{}", strings.Repeat("[", 130), `{"x":"` + strings.Repeat(`\n`, 50) + `"}`,
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := wire.Parse(data)
		stdValid := json.Valid(data) && utf8.Valid(data)
		if err != nil {
			// Stricter than encoding/json only where serde_json is too.
			msg := err.Error()
			if stdValid && !strings.Contains(msg, "recursion limit") && !strings.Contains(msg, "surrogate") &&
				!strings.Contains(msg, "hex escape") && !strings.Contains(msg, "out of range") {
				t.Fatalf("wire.Parse(%q) error = %v, but encoding/json accepts it", data, err)
			}
			return
		}
		if !stdValid {
			t.Fatalf("wire.Parse(%q) accepted what encoding/json refuses", data)
		}
		c := wire.AppendCanonical(nil, &v)
		v2, err := wire.Parse(c)
		if err != nil {
			t.Fatalf("wire.Canonical form %q does not parse: %v", c, err)
		}
		if c2 := wire.AppendCanonical(nil, &v2); !bytes.Equal(c, c2) {
			t.Fatalf("wire.Canonical form is not stable: %q then %q", c, c2)
		}
		if !json.Valid(c) {
			t.Fatalf("wire.Canonical form %q is not valid JSON", c)
		}
		if a, b := stdDecode(t, data), stdDecode(t, c); !reflect.DeepEqual(a, b) {
			t.Fatalf("wire.Canonical form changes the value: %q -> %q", data, c)
		}
	})
}

// stdDecode decodes data with encoding/json, numbers kept as literals.
func stdDecode(t *testing.T, data []byte) any {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("encoding/json cannot decode %q: %v", data, err)
	}
	return v
}

// FuzzDecodeBodies runs the three request decoders on any body: no panics,
// and whatever they accept re-encodes to a body that decodes the same.
func FuzzDecodeBodies(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := parseDoc(data)
		if err != nil {
			return
		}
		if s, err := decodeQueueSettings(doc); err == nil {
			again := mustDecode(t, wire.AppendQueueSettings(nil, s), decodeQueueSettings)
			if s.RetryDelays == nil {
				s.RetryDelays = []ocypod.Duration{}
			}
			if !reflect.DeepEqual(s, again) {
				t.Fatalf("queue settings %+v re-decode as %+v", s, again)
			}
		}
		if spec, err := decodeJobSpec(doc); err == nil {
			if again := mustDecode(t, encodeJobSpec(spec), decodeJobSpec); !reflect.DeepEqual(spec, again) {
				t.Fatalf("job spec %s re-decodes as %s", encodeJobSpec(spec), encodeJobSpec(again))
			}
		}
		if u, err := decodeJobUpdate(doc); err == nil {
			if again := mustDecode(t, encodeJobUpdate(u), decodeJobUpdate); !reflect.DeepEqual(u, again) {
				t.Fatalf("job update %s re-decodes differently", encodeJobUpdate(u))
			}
		}
		out := decodeOutput(doc)
		if again := decodeOutput(mustParse(t, out)); !bytes.Equal(out, again) {
			t.Fatalf("output %q re-decodes as %q", out, again)
		}
	})
}

func mustParse(t *testing.T, b []byte) *jsonDoc {
	t.Helper()
	doc, err := parseDoc(b)
	if err != nil {
		t.Fatalf("parseDoc(%q) error = %v", b, err)
	}
	return doc
}

func mustDecode[T any](t *testing.T, b []byte, decode func(*jsonDoc) (T, error)) T {
	t.Helper()
	v, err := decode(mustParse(t, b))
	if err != nil {
		t.Fatalf("re-decoding %q: %v", b, err)
	}
	return v
}

// encodeJobSpec writes spec back as a request body.
func encodeJobSpec(s ocypod.JobSpec) []byte {
	b := []byte{'{'}
	if s.Input != nil {
		b = wire.AppendRaw(wire.AppendKey(b, "input"), s.Input)
	}
	if s.Tags != nil {
		b = wire.AppendStrings(wire.AppendKey(b, "tags"), s.Tags)
	}
	for key, d := range map[string]*ocypod.Duration{"timeout": s.Timeout, "heartbeat_timeout": s.HeartbeatTimeout, "expires_after": s.ExpiresAfter} {
		if d != nil {
			b = wire.AppendDuration(wire.AppendKey(b, key), *d)
		}
	}
	if s.Retries != nil {
		b = wire.AppendUint(wire.AppendKey(b, "retries"), *s.Retries)
	}
	if s.RetryDelaysSet {
		b = wire.AppendDurations(wire.AppendKey(b, "retry_delays"), s.RetryDelays)
	}
	return append(b, '}')
}

// encodeJobUpdate writes u back as a request body.
func encodeJobUpdate(u ocypod.JobUpdate) []byte {
	b := []byte{'{'}
	if u.Status != nil {
		b = wire.AppendString(wire.AppendKey(b, "status"), string(*u.Status))
	}
	if u.Output != nil {
		b = wire.AppendRaw(wire.AppendKey(b, "output"), u.Output)
	}
	return append(b, '}')
}

// FuzzParseJobID checks the id parser against its definition: optional '+',
// then decimal digits that fit a u64.
func FuzzParseJobID(f *testing.F) {
	for _, s := range []string{"0", "7", "007", "+7", "++7", "-1", "", "+", "18446744073709551615", "18446744073709551616", "1e3", " 1", "٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := parseJobID(s)
		digits := strings.TrimPrefix(s, "+")
		want, werr := strconv.ParseUint(digits, 10, 64)
		if werr != nil || strings.HasPrefix(digits, "+") || strings.HasPrefix(digits, "-") {
			if err == nil {
				t.Fatalf("parseJobID(%q) = %d, want an error", s, id)
			}
			if status, msg := statusOf(err); status != 404 || !strings.HasPrefix(msg, "can not parse ") {
				t.Fatalf("parseJobID(%q) error = %d %q", s, status, msg)
			}
			return
		}
		if err != nil || id != want {
			t.Fatalf("parseJobID(%q) = %d, %v, want %d", s, id, err, want)
		}
	})
}

// FuzzParseFields: any query either fails with one of the two texts or
// yields only known field names.
func FuzzParseFields(f *testing.F) {
	for _, s := range []string{"", "fields=id", "fields=", "fields", "fields=id,id", "fields=a&fields=b", "x=1&fields=ended", "fields=%zz", "fields=id%2Cstatus", "a&&b=&=c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		fields, err := parseFields(q)
		if err != nil {
			if _, msg := statusOf(err); !strings.HasPrefix(msg, "Unrecognised field: ") && msg != "Query deserialize error: duplicate field `fields`" {
				t.Fatalf("parseFields(%q) error = %q", q, msg)
			}
			return
		}
		job := &ocypod.Job{}
		b := wire.AppendJob(nil, job, fields)
		if !json.Valid(b) {
			t.Fatalf("job with fields %q is not valid JSON: %s", fields, b)
		}
	})
}
