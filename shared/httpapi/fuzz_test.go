package httpapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
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
	// The extension's fields.
	`{"priority":-1000000,"run_at":"2024-03-01T10:00:00+02:00","key":"k","on_conflict":"update","update_run_at":"if_later"}`,
	`{"delay":"1h 30m","depends_on":[3,1,3],"retry_backoff":{"min":"1s","max":"1h","factor":1.5,"jitter":false},"timeout_retries":2,"tracked":true}`,
	`{"run_at":"2024-03-01T10:00:00Z","delay":"1s"}`, `{"retry_backoff":{"min":"2s","max":"1s"}}`, `{"priority":1e3}`,
	`[{},{"priority":5},{"tags":["a"]}]`, `[]`, `[1]`,
	`{"status":"failed","error":{"group":"io","message":"disk"},"retry":false}`,
	`{"status":"failed","retry_at":"2030-01-01T00:00:00Z"}`, `{"status":"failed","retry_in":"10s"}`,
	`{"status":"completed","next":{"queue":"q2","input":1,"priority":3}}`, `{"priority":4,"depends_on":[],"tags":["x"],"tracked":false}`,
	`{"paused":true,"concurrency":3,"rate_limit":{"per_second":2.5,"burst":5},"dead_letter_queue":"dlq","shards":4,"timeout_retries":null}`,
	`{"cron":"*/5 * * * *","job":{"input":1}}`, `{"every":"1m","job":{"key":"k"}}`, `{"run_at":"2030-01-01T00:00:00Z"}`, `{"delay":"5s"}`,
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
			t.Fatalf("canonical form %q does not parse: %v", c, err)
		}
		if c2 := wire.AppendCanonical(nil, &v2); !bytes.Equal(c, c2) {
			t.Fatalf("canonical form is not stable: %q then %q", c, c2)
		}
		if !json.Valid(c) {
			t.Fatalf("canonical form %q is not valid JSON", c)
		}
		if a, b := stdDecode(t, data), stdDecode(t, c); !reflect.DeepEqual(a, b) {
			t.Fatalf("canonical form changes the value: %q -> %q", data, c)
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

// FuzzDecodeBodies runs every request body decoder on any body: no panics,
// every refusal a 400, and whatever they accept re-encodes to a body that
// decodes the same.
func FuzzDecodeBodies(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := wire.ParseDoc(data)
		if err != nil {
			return
		}
		// Strict, as a request using the extensions is: an input decodes
		// the same whether or not unknown keys would be ignored.
		decodeSettings := func(d *wire.Doc) (ocypod.QueueSettings, error) {
			return decodeQueueSettings(d, &inputRules{strict: true})
		}
		if s, err := decodeSettings(doc); err == nil {
			again := mustDecode(t, wire.AppendQueueSettings(nil, s), decodeSettings)
			if s.RetryDelays == nil {
				s.RetryDelays = []ocypod.Duration{}
			}
			if !reflect.DeepEqual(s, again) {
				t.Fatalf("queue settings %+v re-decode as %+v", s, again)
			}
		} else {
			want400(t, "queue settings", err)
		}
		decodeSpec := func(d *wire.Doc) (ocypod.JobSpec, error) { return decodeJobSpec(d, &d.Root, &inputRules{}) }
		if spec, err := decodeSpec(doc); err == nil {
			checkSpec(t, spec)
			if again := mustDecode(t, encodeJobSpec(spec), decodeSpec); !reflect.DeepEqual(spec, again) {
				t.Fatalf("job spec %s re-decodes as %s", encodeJobSpec(spec), encodeJobSpec(again))
			}
		} else {
			want400(t, "job spec", err)
		}
		if specs, err := decodeJobSpecs(doc); err == nil {
			if len(specs) < 1 || len(specs) > ocypod.MaxBatch {
				t.Fatalf("batch of %d accepted", len(specs))
			}
			for _, s := range specs {
				checkSpec(t, s)
			}
		} else {
			want400(t, "batch", err)
		}
		decodeUpdate := func(d *wire.Doc) (ocypod.JobUpdate, error) { return decodeJobUpdate(d, &inputRules{}) }
		if u, err := decodeUpdate(doc); err == nil {
			switch {
			case u.RunAt != nil && u.Delay != nil, u.RetryAt != nil && u.RetryIn != nil:
				t.Fatal("update with both of a pair accepted")
			case u.Next != nil && (u.Status == nil || *u.Status != ocypod.StatusCompleted):
				t.Fatal("next accepted without status completed")
			}
			if again := mustDecode(t, encodeJobUpdate(u), decodeUpdate); !reflect.DeepEqual(u, again) {
				t.Fatalf("job update %s re-decodes as %s", encodeJobUpdate(u), encodeJobUpdate(again))
			}
		} else {
			want400(t, "job update", err)
		}
		if p, err := decodeQueuePatch(doc, "q", nil); err == nil {
			if p.RetryBackoff != nil && p.RetryDelaysSet {
				t.Fatal("patch with retry_delays and retry_backoff accepted")
			}
			if p.DeadLetterQueue != nil && *p.DeadLetterQueue == "q" {
				t.Fatal("patch making a queue its own dead letter queue accepted")
			}
		} else {
			want400(t, "queue patch", err)
		}
		if s, err := decodeSchedule(doc, "q", "s"); err == nil {
			if (s.Cron == "") == (s.Every.Secs == 0 && s.Every.Nanos == 0) {
				t.Fatalf("schedule with cron %q and every %v accepted: give exactly one", s.Cron, s.Every)
			}
			if _, err := decodeSpec(mustParse(t, s.Job)); err != nil {
				t.Fatalf("schedule job %s does not decode again: %v", s.Job, err)
			}
		} else {
			want400(t, "schedule", err)
		}
		a := New(&fakeStore{}, Options{})
		if _, err := a.decodeRunAt(doc); err != nil {
			want400(t, "retry body", err)
		}
		out := decodeOutput(doc)
		if again := decodeOutput(mustParse(t, out)); !bytes.Equal(out, again) {
			t.Fatalf("output %q re-decodes as %q", out, again)
		}
	})
}

// want400 fails t unless err is a 400.
func want400(t *testing.T, what string, err error) {
	t.Helper()
	if status, msg := statusOf(err); status != 400 || msg == "" {
		t.Fatalf("%s refused with %d %q, want a 400 with a text", what, status, msg)
	}
}

// checkSpec fails t when an accepted spec breaks a rule of the contract.
func checkSpec(t *testing.T, s ocypod.JobSpec) {
	t.Helper()
	switch {
	case len(s.Tags) > ocypod.MaxTags:
		t.Fatalf("%d tags accepted", len(s.Tags))
	case s.RunAt != nil && s.Delay != nil:
		t.Fatal("run_at and delay accepted together")
	case s.RetryBackoff != nil && s.RetryDelaysSet:
		t.Fatal("retry_delays and retry_backoff accepted together")
	case s.Priority != nil && (*s.Priority < ocypod.MinPriority || *s.Priority > ocypod.MaxPriority):
		t.Fatalf("priority %d accepted", *s.Priority)
	case len(s.DependsOn) > ocypod.MaxDependencies:
		t.Fatalf("%d dependencies accepted", len(s.DependsOn))
	case s.Key != "" && !printable(s.Key, ocypod.MaxKeyLength):
		t.Fatalf("key %q accepted", s.Key)
	}
	for _, tag := range s.Tags {
		if tag == "" {
			t.Fatal("empty tag accepted")
		}
	}
}

func mustParse(t *testing.T, b []byte) *wire.Doc {
	t.Helper()
	doc, err := wire.ParseDoc(b)
	if err != nil {
		t.Fatalf("ParseDoc(%q) error = %v", b, err)
	}
	return doc
}

func mustDecode[T any](t *testing.T, b []byte, decode func(*wire.Doc) (T, error)) T {
	t.Helper()
	v, err := decode(mustParse(t, b))
	if err != nil {
		t.Fatalf("re-decoding %q: %v", b, err)
	}
	return v
}

// appendTime writes "key":"<t in RFC 3339>", which parses back exactly.
func appendTime(b []byte, key string, t *time.Time) []byte {
	return wire.AppendString(wire.AppendKey(b, key), t.Format(time.RFC3339Nano))
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
	for _, kd := range []struct {
		key string
		d   *ocypod.Duration
	}{{"timeout", s.Timeout}, {"heartbeat_timeout", s.HeartbeatTimeout}, {"expires_after", s.ExpiresAfter}, {"delay", s.Delay}} {
		if kd.d != nil {
			b = wire.AppendDuration(wire.AppendKey(b, kd.key), *kd.d)
		}
	}
	if s.Retries != nil {
		b = wire.AppendUint(wire.AppendKey(b, "retries"), *s.Retries)
	}
	if s.RetryDelaysSet {
		b = wire.AppendDurations(wire.AppendKey(b, "retry_delays"), s.RetryDelays)
	}
	if s.Priority != nil {
		b = strconv.AppendInt(wire.AppendKey(b, "priority"), *s.Priority, 10)
	}
	if s.RunAt != nil {
		b = appendTime(b, "run_at", s.RunAt)
	}
	if s.Key != "" {
		b = wire.AppendString(wire.AppendKey(b, "key"), s.Key)
	}
	if s.OnConflict != "" {
		b = wire.AppendString(wire.AppendKey(b, "on_conflict"), string(s.OnConflict))
	}
	if s.UpdateRunAt != "" {
		b = wire.AppendString(wire.AppendKey(b, "update_run_at"), string(s.UpdateRunAt))
	}
	if s.DependsOn != nil {
		b = wire.AppendIDs(wire.AppendKey(b, "depends_on"), s.DependsOn)
	}
	if s.RetryBackoff != nil {
		b = wire.AppendBackoff(wire.AppendKey(b, "retry_backoff"), s.RetryBackoff)
	}
	if s.TimeoutRetries != nil {
		b = wire.AppendUint(wire.AppendKey(b, "timeout_retries"), *s.TimeoutRetries)
	}
	if s.Tracked != nil {
		b = strconv.AppendBool(wire.AppendKey(b, "tracked"), *s.Tracked)
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
	if u.Error != nil {
		b = append(wire.AppendKey(b, "error"), '{')
		if u.Error.Group != "" {
			b = wire.AppendString(wire.AppendKey(b, "group"), u.Error.Group)
		}
		b = append(wire.AppendString(wire.AppendKey(b, "message"), u.Error.Message), '}')
	}
	if u.Retry != nil {
		b = strconv.AppendBool(wire.AppendKey(b, "retry"), *u.Retry)
	}
	if u.RetryAt != nil {
		b = appendTime(b, "retry_at", u.RetryAt)
	}
	if u.RetryIn != nil {
		b = wire.AppendDuration(wire.AppendKey(b, "retry_in"), *u.RetryIn)
	}
	if u.Next != nil {
		spec := encodeJobSpec(u.Next.Spec)
		b = append(wire.AppendKey(b, "next"), spec[:len(spec)-1]...)
		b = append(wire.AppendString(wire.AppendKey(b, "queue"), u.Next.Queue), '}')
	}
	if u.Priority != nil {
		b = strconv.AppendInt(wire.AppendKey(b, "priority"), *u.Priority, 10)
	}
	if u.RunAt != nil {
		b = appendTime(b, "run_at", u.RunAt)
	}
	if u.Delay != nil {
		b = wire.AppendDuration(wire.AppendKey(b, "delay"), *u.Delay)
	}
	if u.DependsOnSet {
		b = wire.AppendIDs(wire.AppendKey(b, "depends_on"), u.DependsOn)
	}
	if u.TagsSet {
		b = wire.AppendStrings(wire.AppendKey(b, "tags"), u.Tags)
	}
	if u.Tracked != nil {
		b = strconv.AppendBool(wire.AppendKey(b, "tracked"), *u.Tracked)
	}
	return append(b, '}')
}

// FuzzParseJobID checks the id parser against its definition: optional '+',
// then decimal digits that fit a u64.
func FuzzParseJobID(f *testing.F) {
	for _, s := range []string{"0", "7", "007", "+7", "++7", "-1", "", "+", "18446744073709551615", "18446744073709551616", "1e3", " 1", "٣", "000000000000000000000000042"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := wire.ParseU64(s)
		digits := strings.TrimPrefix(s, "+")
		want, werr := strconv.ParseUint(digits, 10, 64)
		if werr != nil || strings.HasPrefix(digits, "+") || strings.HasPrefix(digits, "-") {
			if err == nil {
				t.Fatalf("ParseU64(%q) = %d, want an error", s, id)
			}
			if status, msg := statusOf(err); status != 404 || !strings.HasPrefix(msg, "can not parse ") {
				t.Fatalf("ParseU64(%q) error = %d %q", s, status, msg)
			}
			return
		}
		if err != nil || id != want {
			t.Fatalf("ParseU64(%q) = %d, %v, want %d", s, id, err, want)
		}
	})
}

// FuzzParseFields: any query either fails with one of the two texts or
// yields known field names, each once, so the answer is never larger than
// the whole job.
func FuzzParseFields(f *testing.F) {
	for _, s := range []string{"", "fields=id", "fields=", "fields", "fields=id,id", "fields=a&fields=b", "x=1&fields=ended",
		"fields=%zz", "fields=id%2Cstatus", "a&&b=&=c", "fields=history,attempt,priority,priority"} {
		f.Add(s)
	}
	full := wire.AppendJob(nil, &ocypod.Job{}, append(append([]string(nil), ocypod.JobFields...), ocypod.ExtJobFields...))
	f.Fuzz(func(t *testing.T, q string) {
		fields, err := parseFields(wire.ParseQuery(q))
		if err != nil {
			if _, msg := statusOf(err); !strings.HasPrefix(msg, "Unrecognised field: ") && msg != "Query deserialize error: duplicate field `fields`" {
				t.Fatalf("parseFields(%q) error = %q", q, msg)
			}
			return
		}
		b := wire.AppendJob(nil, &ocypod.Job{}, fields)
		if !json.Valid(b) {
			t.Fatalf("job with fields %q is not valid JSON: %s", fields, b)
		}
		if len(b) > len(full) {
			t.Fatalf("job with fields %q is %d bytes, more than all fields (%d)", fields, len(b), len(full))
		}
	})
}

// FuzzQueryParams runs the query parameter readers of the take, listing
// and fencing routes on any query: no panics, refusals are 400s, and what
// they accept is within the contract's bounds.
func FuzzQueryParams(f *testing.F) {
	for _, s := range []string{"", "wait=20s&count=100&worker=w-1", "wait=21s", "count=0", "count=101", "worker=%01",
		"queues=a,b,a&order=round_robin", "queues=", "queues=a%2Fb", "order=x&queues=a", "status=queued,queued&limit=1000",
		"tracked=yes", "limit=0", "attempt=3", "attempt=-1", "take=q&count=2", "count=2", "wait=1s&wait=2s", "date=2024-02-30"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q := wire.ParseQuery(raw)
		if tp, err := parseTake(q, []string{"q"}); err == nil {
			if tp.req.Count < 1 || tp.req.Count > ocypod.MaxTakeCount || tp.req.Wait > ocypod.MaxWait || tp.req.Wait < 0 {
				t.Fatalf("take %+v accepted", tp.req)
			}
			if tp.worker && !printable(tp.req.Worker, ocypod.MaxWorkerName) {
				t.Fatalf("worker %q accepted", tp.req.Worker)
			}
		} else {
			want400(t, "take", err)
		}
		if qs, err := queuesParam(q); err == nil {
			seen := map[string]bool{}
			for _, name := range qs {
				if seen[name] || !ocypod.ValidQueueName(name) {
					t.Fatalf("queues %q accepted", qs)
				}
				seen[name] = true
			}
		} else {
			want400(t, "queues", err)
		}
		if req, err := listRequest(q, "q"); err == nil {
			if req.Limit < 1 || req.Limit > ocypod.MaxListLimit {
				t.Fatalf("limit %d accepted", req.Limit)
			}
			if _, ok := ocypod.ParseStatus(string(req.Status)); req.Status != "" && !ok {
				t.Fatalf("status %q accepted", req.Status)
			}
		} else {
			want400(t, "listing", err)
		}
		if _, err := attemptParam(q); err != nil {
			want400(t, "attempt", err)
		}
		if _, err := updateTakeParams(q); err != nil {
			want400(t, "take=", err)
		}
	})
}
