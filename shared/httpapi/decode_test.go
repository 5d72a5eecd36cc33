package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// diff returns "" if want and got are deeply equal, else both as JSON
// (which shows what pointers point to).
func diff(want, got any) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	w, _ := json.Marshal(want)
	g, _ := json.Marshal(got)
	return "\n got: " + string(g) + "\nwant: " + string(w)
}

func durPtr(secs uint64) *ocypod.Duration { d := ocypod.Seconds(secs); return &d }
func u64Ptr(n uint64) *uint64             { return &n }

func TestDecodeQueueSettings(t *testing.T) {
	t.Parallel()
	var got ocypod.QueueSettings
	store := &fakeStore{PutQueueFunc: func(_ context.Context, _ string, s ocypod.QueueSettings) (bool, error) {
		got = s
		return true, nil
	}}
	h := New(store, Options{}).Handler()
	tests := map[string]ocypod.QueueSettings{
		`{}`: ocypod.DefaultQueueSettings(),
		`{"timeout":"1h 30m","heartbeat_timeout":"1500ms","expires_after":"0s","retries":3,"retry_delays":["10s","1m"]}`: {
			Timeout: ocypod.Seconds(5400), HeartbeatTimeout: ocypod.Seconds(1), Retries: 3,
			RetryDelays: []ocypod.Duration{ocypod.Seconds(10), ocypod.Seconds(60)},
		},
		`{"retries":18446744073709551615,"retry_delays":[]}`: {
			Timeout: ocypod.Seconds(300), ExpiresAfter: ocypod.Seconds(300), Retries: 18446744073709551615,
			RetryDelays: []ocypod.Duration{},
		},
		`{"foo":[1,{"x":null}],"retries":1,"Timeout":5,"bar":null,"bar":1}`: {
			Timeout: ocypod.Seconds(300), ExpiresAfter: ocypod.Seconds(300), Retries: 1,
		},
		"\n{ \"timeout\" : \" 2days 3h \" }\n": {Timeout: ocypod.Seconds(2*86400 + 3*3600), ExpiresAfter: ocypod.Seconds(300)},
		`{"timeout":"\u0035m"}`:                {Timeout: ocypod.Seconds(300), ExpiresAfter: ocypod.Seconds(300)},
	}
	for body, want := range tests {
		got = ocypod.QueueSettings{}
		w := do(h, http.MethodPut, "/queue/q", body)
		wantResponse(t, w, http.StatusCreated, "", "")
		if d := diff(want, got); d != "" {
			t.Errorf("PUT /queue/q %s: settings %s", body, d)
		}
	}
}

func TestContentTypes(t *testing.T) {
	t.Parallel()
	h := New(&fakeStore{}, Options{}).Handler()
	for ct, ok := range map[string]bool{
		"application/json":                  true,
		"application/json; charset=utf-8":   true,
		"APPLICATION/JSON":                  true,
		"text/json":                         true,
		"application/x+json":                true,
		"application/problem+json; v=1":     true,
		"":                                  false,
		"text/plain":                        false,
		"application/jsonx":                 false,
		"application/json-patch":            false,
		"json":                              false,
		"application/x-www-form-urlencoded": false,
		"application/json; charset":         false,
		"multipart/form-data; boundary=x":   false,
	} {
		r := newRequest(http.MethodPut, "/queue/q", "{}")
		r.Header.Set("Content-Type", ct)
		w := serve(h, r)
		if ok {
			wantEmpty(t, w, http.StatusCreated)
		} else {
			wantText(t, w, http.StatusBadRequest, "Content type error")
		}
	}
}

func TestDecodeJobSpec(t *testing.T) {
	t.Parallel()
	var got ocypod.JobSpec
	store := &fakeStore{CreateJobFunc: func(_ context.Context, _ string, s ocypod.JobSpec) (ocypod.Created, error) {
		got = s
		return ocypod.Created{ID: 12}, nil
	}}
	h := New(store, Options{}).Handler()
	tests := map[string]ocypod.JobSpec{
		`{}`: {},
		`{"input":null,"tags":null,"timeout":null,"heartbeat_timeout":null,"expires_after":null,"retries":null,"retry_delays":null}`: {},
		`{"input":{"b":1,"a":[1.0,"\u00e9"]},"tags":["x","x","✓"],"timeout":"10s","heartbeat_timeout":"1m","expires_after":"0s","retries":0,"retry_delays":[]}`: {
			Input: json.RawMessage(`{"a":[1.0,"é"],"b":1}`), Tags: []string{"x", "x", "✓"},
			Timeout: durPtr(10), HeartbeatTimeout: durPtr(60), ExpiresAfter: durPtr(0), Retries: u64Ptr(0),
			RetryDelays: []ocypod.Duration{}, RetryDelaysSet: true,
		},
		`{"tags":[],"retry_delays":["1s","2500ms"],"input":"text"}`: {
			Input: json.RawMessage(`"text"`), Tags: []string{},
			RetryDelays: []ocypod.Duration{ocypod.Seconds(1), ocypod.Seconds(2)}, RetryDelaysSet: true,
		},
		`{"input":[],"unknown":{"deep":[[[]]]}}`: {Input: json.RawMessage(`[]`)},
		`{"input":0}`:                            {Input: json.RawMessage(`0`)},
		`{"input":false}`:                        {Input: json.RawMessage(`false`)},
	}
	for body, want := range tests {
		got = ocypod.JobSpec{}
		w := do(h, http.MethodPost, "/queue/q/job", body)
		wantJSON(t, w, http.StatusCreated, `12`)
		if loc := w.Header().Get("Location"); loc != "/job/12" {
			t.Errorf("Location = %q, want /job/12", loc)
		}
		if d := diff(want, got); d != "" {
			t.Errorf("POST %s: spec %s", body, d)
		}
	}
}

func TestDecodeJobUpdate(t *testing.T) {
	t.Parallel()
	var got ocypod.JobUpdate
	calls := 0
	store := &fakeStore{UpdateJobFunc: func(_ context.Context, _ uint64, u ocypod.JobUpdate, _ *ocypod.TakeRequest) (ocypod.UpdateResult, []ocypod.NextJob, error) {
		got = u
		calls++
		return ocypod.UpdateResult{}, nil, nil
	}}
	h := New(store, Options{}).Handler()
	completed, queued := ocypod.StatusCompleted, ocypod.StatusQueued
	tests := map[string]ocypod.JobUpdate{
		`{}`:                             {},
		`{"status":null,"output":null}`:  {},
		`{"retries":1}`:                  {},
		`{"status":"completed"}`:         {Status: &completed},
		`{"output":{"z":1,"a":2}}`:       {Output: json.RawMessage(`{"a":2,"z":1}`)},
		`{"status":"queued","output":1}`: {Status: &queued, Output: json.RawMessage(`1`)},
	}
	for body, want := range tests {
		got = ocypod.JobUpdate{}
		wantEmpty(t, do(h, http.MethodPatch, "/job/1", body), http.StatusNoContent)
		if d := diff(want, got); d != "" {
			t.Errorf("PATCH %s: update %s", body, d)
		}
	}
	if calls != len(tests) {
		t.Errorf("UpdateJob calls = %d, want %d (empty updates too)", calls, len(tests))
	}
}

func TestDecodeOutput(t *testing.T) {
	t.Parallel()
	var got json.RawMessage
	store := &fakeStore{SetJobOutputFunc: func(_ context.Context, _ uint64, out json.RawMessage, _ *uint64) error {
		got = out
		return nil
	}}
	h := New(store, Options{}).Handler()
	for body, want := range map[string]string{
		`null`:                               `null`,
		` {"b":[],"a":"\u00e9","a":"last"} `: `{"a":"last","b":[]}`,
		`"just a string"`:                    `"just a string"`,
		`-12.5e+3`:                           `-12.5e+3`,
		`[{"b":2,"a":1}]`:                    `[{"a":1,"b":2}]`,
	} {
		wantEmpty(t, do(h, http.MethodPut, "/job/1/output", body), http.StatusNoContent)
		if string(got) != want {
			t.Errorf("PUT output %s: stored %s, want %s", body, got, want)
		}
	}
}

// chunked hides the body's length, as a chunked transfer does.
type chunked struct{ io.Reader }

func TestBodyLimits(t *testing.T) {
	t.Parallel()
	store := &fakeStore{}
	h := New(store, Options{MaxBodySize: 16}).Handler()
	exact := `{"retries": 1  }` // 16 bytes
	wantEmpty(t, do(h, http.MethodPut, "/queue/q", exact), http.StatusCreated)
	wantText(t, do(h, http.MethodPut, "/queue/q", exact+" "), http.StatusRequestEntityTooLarge,
		"JSON payload (17 bytes) is larger than allowed (limit: 16 bytes).")

	r := httptestRequestStream(http.MethodPut, "/queue/q", exact)
	wantEmpty(t, serve(h, r), http.StatusCreated)
	r = httptestRequestStream(http.MethodPut, "/queue/q", exact+" ")
	wantText(t, serve(h, r), http.StatusRequestEntityTooLarge, "JSON payload has exceeded limit (16 bytes).")

	// The content type is checked first.
	r = newRequest(http.MethodPut, "/queue/q", strings.Repeat(" ", 100))
	r.Header.Set("Content-Type", "text/plain")
	wantText(t, serve(h, r), http.StatusBadRequest, "Content type error")

	// A request without a body reads as an empty one.
	r = newRequest(http.MethodPut, "/queue/q", "")
	r.Header.Set("Content-Type", "application/json")
	r.Body = nil
	wantText(t, serve(h, r), http.StatusBadRequest, "Json deserialize error: EOF while parsing a value at line 1 column 0")

	// The default limit is 256 KiB.
	h = New(store, Options{}).Handler()
	big := `{"input":"` + strings.Repeat("x", DefaultMaxBodySize-12) + `"}`
	if len(big) != DefaultMaxBodySize {
		t.Fatalf("len(big) = %d", len(big))
	}
	wantJSON(t, do(h, http.MethodPost, "/queue/q/job", big), http.StatusCreated, "1")
	wantText(t, do(h, http.MethodPost, "/queue/q/job", big+" "), http.StatusRequestEntityTooLarge,
		"JSON payload (262145 bytes) is larger than allowed (limit: 262144 bytes).")
}

// httptestRequestStream is newRequest with an unknown Content-Length.
func httptestRequestStream(method, target, body string) *http.Request {
	r := newRequest(method, target, body)
	r.Body = io.NopCloser(chunked{strings.NewReader(body)})
	r.ContentLength = -1
	return r
}
