package push

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

func TestDecodeTarget(t *testing.T) {
	pol := localPolicy(t)
	ok := []struct {
		in     string
		public string
		check  func(*Target) bool
	}{
		{`{"url": "http://127.0.0.1:9000/run"}`, `{"url":"http://127.0.0.1:9000/run","batch":1,"concurrency":10,"secret":"set"}`,
			func(t *Target) bool { return len(t.Secret.Bytes()) == 43 && t.Timeout.IsZero() }},
		{`{"lambda": "arn:aws:lambda:eu-west-1:123456789012:function:worker:live", "batch": 100, "concurrency": 1000, "timeout": "15m", "secret": "0123456789abcdef"}`,
			`{"lambda":"arn:aws:lambda:eu-west-1:123456789012:function:worker:live","batch":100,"concurrency":1000,"timeout":"15m","secret":"set"}`,
			func(t *Target) bool { return string(t.Secret.Bytes()) == "0123456789abcdef" }},
		{`{"lambda": "worker", "batch": 1, "concurrency": 1, "timeout": "1s 500ms"}`, `{"lambda":"worker","batch":1,"concurrency":1,"timeout":"1s","secret":"set"}`, nil},
		{`{"url": "https://localhost/x", "timeout": "90s", "secret": "` + strings.Repeat("k", 256) + `"}`, `{"url":"https://localhost/x","batch":1,"concurrency":10,"timeout":"1m 30s","secret":"set"}`, nil},
	}
	for _, c := range ok {
		got, err := DecodeTarget([]byte(c.in), pol)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		b, _ := json.Marshal(got)
		if string(b) != c.public {
			t.Errorf("%s: public view %s, want %s", c.in, b, c.public)
		}
		if c.check != nil && !c.check(got) {
			t.Errorf("%s: %+v", c.in, got)
		}
	}

	bad := []struct{ in, want string }{
		{`{"url": "http://127.0.0.1/", "retries": 3}`, "Unknown field: push.retries"},
		{`{"URL": "http://127.0.0.1/"}`, "Unknown field: push.URL"},
		{`{}`, "Invalid push: url or lambda is required"},
		{`{"url": "http://127.0.0.1/", "lambda": "f"}`, "Invalid push: give url or lambda, not both"},
		{`{"url": "http://127.0.0.1/", "batch": 0}`, "Invalid push: batch must be 1..100"},
		{`{"url": "http://127.0.0.1/", "batch": 101}`, "Invalid push: batch must be 1..100"},
		{`{"url": "http://127.0.0.1/", "batch": 1.5}`, "Invalid push: batch must be an integer 1..100"},
		{`{"url": "http://127.0.0.1/", "batch": "2"}`, "Invalid push: batch: expected an integer, got a string"},
		{`{"url": "http://127.0.0.1/", "concurrency": 0}`, "Invalid push: concurrency must be 1..1000"},
		{`{"url": "http://127.0.0.1/", "concurrency": 1001}`, "Invalid push: concurrency must be 1..1000"},
		{`{"url": "http://127.0.0.1/", "timeout": "999ms"}`, "Invalid push: timeout must be between 1s and 15m"},
		{`{"url": "http://127.0.0.1/", "timeout": "15m 1s"}`, "Invalid push: timeout must be between 1s and 15m"},
		{`{"url": "http://127.0.0.1/", "timeout": 30}`, "Invalid push: timeout: invalid type: integer `30`, expected a duration string"},
		{`{"url": "http://127.0.0.1/", "timeout": "soon"}`, "Invalid push: timeout: expected number at 0"},
		{`{"url": "http://127.0.0.1/", "secret": "short-secret"}`, "Invalid push: secret must be 16..256 bytes"},
		{`{"url": "http://127.0.0.1/", "secret": "` + strings.Repeat("k", 257) + `"}`, "Invalid push: secret must be 16..256 bytes"},
		{`{"url": "http://127.0.0.1/", "secret": 1234567890123456789}`, "Invalid push: secret: expected a string"},
		{`{"url": 5}`, "Invalid push: url: expected a string, got a number"},
		{`{"url": "http://example.com/"}`, "Invalid push: host example.com is not allowed: only loopback targets are allowed unless [push] allowed_hosts lists the host"},
		{`{"url": "http://169.254.169.254/"}`, "Invalid push: target 169.254.169.254 is a link-local address"},
		{`{"lambda": "my function"}`, `Invalid push: lambda: invalid character ' ' in a function name or ARN`},
		{`{"lambda": "` + strings.Repeat("f", 65) + `"}`, "Invalid push: lambda: a function name is at most 64 bytes"},
		{`{"url": "http://127.0.0.1/", "url": "http://127.0.0.2/"}`, "Invalid push: url is given twice"},
		{`[]`, "Invalid push: expected an object or null, got a list"},
		{`"http://127.0.0.1/"`, "Invalid push: expected an object or null, got a string"},
		{`{"url": }`, "Invalid push: malformed JSON"},
	}
	for _, c := range bad {
		got, err := DecodeTarget([]byte(c.in), pol)
		if err == nil {
			t.Errorf("%s: accepted %+v", c.in, got)
			continue
		}
		if ocypod.ErrorKind(err) != ocypod.KindInvalid || ocypod.ErrorMessage(err) != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.in, ocypod.ErrorMessage(err), c.want)
		}
	}

	if got, err := DecodeTarget([]byte(` null `), pol); got != nil || err != nil {
		t.Errorf("null: %+v %v", got, err)
	}
}

func TestServerMadeSecretsDiffer(t *testing.T) {
	a, err := DecodeTarget([]byte(`{"url": "http://localhost/"}`), localPolicy(t))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := DecodeTarget([]byte(`{"url": "http://localhost/"}`), localPolicy(t))
	if string(a.Secret.Bytes()) == string(b.Secret.Bytes()) || len(a.Secret.Bytes()) < MinSecretLen {
		t.Fatal("server-made secrets are equal or short")
	}
	if err := a.Validate(localPolicy(t)); err != nil {
		t.Fatal(err)
	}
}

func TestTargetStoredRoundTrip(t *testing.T) {
	in, err := DecodeTarget([]byte(`{"url": "http://localhost:1/", "batch": 3, "timeout": "2m", "secret": "0123456789abcdef\u00e9"}`), localPolicy(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := in.MarshalStored()
	if err != nil {
		t.Fatal(err)
	}
	out, err := UnmarshalStored(b)
	if err != nil {
		t.Fatal(err)
	}
	if out.URL != in.URL || out.Batch != 3 || out.Concurrency != 10 || out.Timeout != ocypod.Seconds(120) || string(out.Secret.Bytes()) != "0123456789abcdef\u00e9" {
		t.Fatalf("%+v", out)
	}
}

func TestEffectiveTimeout(t *testing.T) {
	cases := []struct {
		setting, queue ocypod.Duration
		want           time.Duration
	}{
		{ocypod.Seconds(30), ocypod.Seconds(600), 30 * time.Second},
		{ocypod.Duration{}, ocypod.Seconds(600), 10 * time.Minute},
		{ocypod.Duration{}, ocypod.Seconds(7200), 15 * time.Minute},
		{ocypod.Duration{}, ocypod.Duration{}, 15 * time.Minute},
	}
	for _, c := range cases {
		tg := Target{Timeout: c.setting}
		if got := tg.EffectiveTimeout(c.queue); got != c.want {
			t.Errorf("setting %v queue %v: %v, want %v", c.setting, c.queue, got, c.want)
		}
	}
}

func TestDecodeCallback(t *testing.T) {
	pol := localPolicy(t)
	c, err := DecodeCallback([]byte(`{"url": "http://127.0.0.1:7000/done"}`), pol)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(c)
	if want := `{"url":"http://127.0.0.1:7000/done","on":["completed","failed","cancelled","timed_out"],"secret":"set"}`; string(b) != want {
		t.Fatalf("%s, want %s", b, want)
	}
	if !c.Secret.IsSet() || !c.Wants(ocypod.StatusCancelled) {
		t.Fatalf("%+v", c)
	}
	c, err = DecodeCallback([]byte(`{"url": "http://127.0.0.1:7000/done", "on": ["failed", "timed_out"], "secret": "0123456789abcdef"}`), pol)
	if err != nil {
		t.Fatal(err)
	}
	if c.Wants(ocypod.StatusCompleted) || !c.Wants(ocypod.StatusTimedOut) || string(c.Secret.Bytes()) != "0123456789abcdef" {
		t.Fatalf("%+v", c)
	}
	bad := []struct{ in, want string }{
		{`{"url": "http://127.0.0.1/", "events": []}`, "Unknown field: callback.events"},
		{`{}`, "Invalid callback: url is required"},
		{`{"url": "http://127.0.0.1/", "on": []}`, "Invalid callback: on must name at least one of completed, failed, cancelled, timed_out"},
		{`{"url": "http://127.0.0.1/", "on": ["running"]}`, `Invalid callback: on: "running" is not an ending status (completed, failed, cancelled, timed_out)`},
		{`{"url": "http://127.0.0.1/", "on": ["failed", "failed"]}`, `Invalid callback: on: "failed" is given twice`},
		{`{"url": "http://127.0.0.1/", "on": "failed"}`, `Invalid callback: on: expected a list of statuses, got a string`},
		{`{"url": "http://127.0.0.1/", "secret": "tiny"}`, "Invalid callback: secret must be 16..256 bytes"},
		{`{"url": "http://[fd00:ec2::254]/"}`, "Invalid callback: target fd00:ec2::254 is a cloud metadata address"},
		{`{"url": "https://example.org/"}`, "Invalid callback: host example.org is not allowed: only loopback targets are allowed unless [push] allowed_hosts lists the host"},
	}
	for _, c := range bad {
		_, err := DecodeCallback([]byte(c.in), pol)
		if err == nil || ocypod.ErrorKind(err) != ocypod.KindInvalid || ocypod.ErrorMessage(err) != c.want {
			t.Errorf("%s:\n got %v\nwant %q", c.in, err, c.want)
		}
	}
	stored, _ := c.MarshalStored()
	back, err := UnmarshalStoredCallback(stored)
	if err != nil || back.URL != c.URL || len(back.On) != 2 || string(back.Secret.Bytes()) != "0123456789abcdef" {
		t.Fatalf("%+v %v", back, err)
	}
}

// TestSecretNotPrinted: no formatting of a setting shows its key.
func TestSecretNotPrinted(t *testing.T) {
	tg := testTarget("http://127.0.0.1/", 1)
	cb := Callback{URL: "http://127.0.0.1/", On: EndingStatuses, Secret: SecretFrom([]byte(testSecret))}
	var texts []string
	for _, v := range []any{tg, *tg, cb, &cb, tg.Secret} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
			texts = append(texts, fmt.Sprintf(verb, v))
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	log, buf := captureLog()
	log.Info("settings", "target", *tg, "callback", cb, "secret", tg.Secret)
	texts = append(texts, buf.String())
	for _, s := range texts {
		if strings.Contains(s, testSecret) || strings.Contains(s, fmt.Sprintf("%x", testSecret)) {
			t.Errorf("the secret shows in %q", s)
		}
	}
	if !strings.Contains(buf.String(), `"secret":"set"`) {
		t.Errorf("log %s", buf.String())
	}
}
