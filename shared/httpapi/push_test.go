package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ocyless/ocyless/shared/push"
)

const pushDefaults = `{"timeout":"5m","heartbeat_timeout":"0s","expires_after":"5m","retries":0,"retry_delays":[]`

// TestPushSettings: push and callback are queue settings that PUT
// replaces and PATCH merges; GET shows the secret as "set"; a secret the
// server made is answered once, in a header; a given one never is.
func TestPushSettings(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	w := do(env.h, http.MethodPut, "/queue/q", `{"push":{"url":"http://127.0.0.1:9/jobs","batch":5}}`)
	wantEmpty(t, w, http.StatusCreated)
	made := w.Header().Get(PushSecretHeader)
	if len(made) != 43 {
		t.Fatalf("%s = %q, want a server-made secret of 43 characters", PushSecretHeader, made)
	}
	if w.Header().Get(CallbackSecretHeader) != "" {
		t.Errorf("%s set without a callback", CallbackSecretHeader)
	}
	get := do(env.h, http.MethodGet, "/queue/q", "")
	wantJSON(t, get, http.StatusOK, pushDefaults+`,"push":{"url":"http://127.0.0.1:9/jobs","batch":5,"concurrency":10,"secret":"set"}}`)
	if strings.Contains(get.Body.String(), made) {
		t.Fatal("GET shows the secret")
	}

	// PATCH merges: push stays, callback comes with its own secret (given:
	// no header); the whole push is replaced when named.
	const secret = "0123456789abcdef-given"
	w = do(env.h, http.MethodPatch, "/queue/q", `{"callback":{"url":"http://localhost:9/cb","on":["failed"],"secret":"`+secret+`"},`+
		`"push":{"lambda":"worker","timeout":"30s","secret":"`+secret+`"}}`)
	wantEmpty(t, w, http.StatusNoContent)
	if w.Header().Get(PushSecretHeader) != "" || w.Header().Get(CallbackSecretHeader) != "" {
		t.Errorf("a given secret is answered in a header: %v", w.Header())
	}
	get = do(env.h, http.MethodGet, "/queue/q", "")
	wantJSON(t, get, http.StatusOK, pushDefaults+`,"push":{"lambda":"worker","batch":1,"concurrency":10,"timeout":"30s","secret":"set"},`+
		`"callback":{"url":"http://localhost:9/cb","on":["failed"],"secret":"set"}}`)
	if strings.Contains(get.Body.String(), secret) {
		t.Fatal("GET shows the secret")
	}
	for _, line := range env.logs.lines() {
		if strings.Contains(line, secret) || strings.Contains(line, made) {
			t.Fatalf("a log line shows a secret: %s", line)
		}
	}
	w = do(env.h, http.MethodPatch, "/queue/q", `{"callback":{"url":"http://localhost:9/cb"}}`)
	wantEmpty(t, w, http.StatusNoContent)
	if got := w.Header().Get(CallbackSecretHeader); len(got) != 43 {
		t.Errorf("%s = %q, want a server-made secret", CallbackSecretHeader, got)
	}
	// null removes one; PUT resets what it does not name.
	wantEmpty(t, do(env.h, http.MethodPatch, "/queue/q", `{"push":null}`), http.StatusNoContent)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q", ""), http.StatusOK,
		pushDefaults+`,"callback":{"url":"http://localhost:9/cb","on":["completed","failed","cancelled","timed_out"],"secret":"set"}}`)
	wantEmpty(t, do(env.h, http.MethodPut, "/queue/q", `{}`), http.StatusNoContent)
	wantJSON(t, do(env.h, http.MethodGet, "/queue/q", ""), http.StatusOK, pushDefaults+`}`)
}

// TestPushSettingsRefused: a refused target or an unknown field is a 400
// that writes nothing, on PUT (new and existing queues) and PATCH.
func TestPushSettingsRefused(t *testing.T) {
	t.Parallel()
	pol, err := push.NewPolicy([]string{"hooks.example"}, push.Local)
	if err != nil {
		t.Fatal(err)
	}
	env := newEnv(t, Options{PushPolicy: pol})
	env.must(t, http.MethodPut, "/queue/q", `{}`, http.StatusCreated)
	cases := map[string]struct{ body, want string }{
		"host not allowed":   {`{"push":{"url":"http://127.0.0.1:9/"}}`, "Invalid push: "},
		"metadata":           {`{"push":{"url":"http://169.254.169.254/"}}`, "Invalid push: "},
		"both":               {`{"push":{"url":"https://hooks.example/","lambda":"f"}}`, "Invalid push: give url or lambda, not both"},
		"batch":              {`{"push":{"url":"https://hooks.example/","batch":101}}`, "Invalid push: batch must be 1..100"},
		"short secret":       {`{"push":{"url":"https://hooks.example/","secret":"short"}}`, "Invalid push: secret must be 16..256 bytes"},
		"unknown push":       {`{"push":{"url":"https://hooks.example/","retries":1}}`, "Unknown field: push.retries"},
		"not an object":      {`{"push":"https://hooks.example/"}`, "Invalid push: expected an object or null, got a string"},
		"callback host":      {`{"callback":{"url":"http://10.1.2.3/"}}`, "Invalid callback: "},
		"callback on":        {`{"callback":{"url":"https://hooks.example/","on":["running"]}}`, "Invalid callback: on: \"running\" is not an ending status (completed, failed, cancelled, timed_out)"},
		"unknown callback":   {`{"callback":{"url":"https://hooks.example/","when":1}}`, "Unknown field: callback.when"},
		"unknown with valid": {`{"push":{"url":"https://hooks.example/"},"pushh":1}`, "Unknown field: pushh"},
	}
	before := env.snapshot(t)
	for name, c := range cases {
		for _, req := range []struct{ method, path string }{
			{http.MethodPatch, "/queue/q"}, {http.MethodPut, "/queue/q"}, {http.MethodPut, "/queue/new"},
		} {
			w := do(env.h, req.method, req.path, c.body)
			if w.Code != http.StatusBadRequest || !strings.HasPrefix(w.Body.String(), c.want) {
				t.Errorf("%s: %s %s = %d %q, want 400 %q...", name, req.method, req.path, w.Code, w.Body, c.want)
			}
			if strings.Contains(w.Body.String(), "short") && name == "short secret" {
				t.Errorf("%s: the refusal repeats the secret: %q", name, w.Body)
			}
		}
	}
	if after := env.snapshot(t); !equalSnapshots(before, after) {
		t.Error("a refused push or callback setting wrote to Redis")
	}
	env.must(t, http.MethodPatch, "/queue/q", `{"push":{"url":"https://hooks.example/jobs"}}`, http.StatusNoContent)
}

// TestPushQueueTakes: takes from a push queue answer 409, also naming it
// among other queues and after a PATCH, which then applies nothing.
func TestPushQueueTakes(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.must(t, http.MethodPut, "/queue/p", `{"push":{"url":"http://127.0.0.1:9/"}}`, http.StatusCreated)
	env.must(t, http.MethodPut, "/queue/o", `{}`, http.StatusCreated)
	env.must(t, http.MethodPost, "/queue/p/job", `{"input":1}`, http.StatusCreated)
	id := env.must(t, http.MethodPost, "/queue/o/job", `{"input":2}`, http.StatusCreated)
	env.must(t, http.MethodGet, "/queue/o/job", "", http.StatusOK)
	const refused = "Queue 'p' delivers its jobs by push"
	before := env.snapshot(t)
	for _, target := range []string{
		"/queue/p/job", "/queue/p/job?count=2&wait=1s", "/job?queues=o,p", "/job?queues=p,o&order=round_robin",
	} {
		wantText(t, do(env.h, http.MethodGet, target, ""), http.StatusConflict, refused)
	}
	wantText(t, do(env.h, http.MethodPatch, "/job/"+id+"?take=p", `{"status":"completed"}`), http.StatusConflict, refused)
	wantText(t, do(env.h, http.MethodPatch, "/jobs?take=p", `[{"id":`+id+`,"status":"completed"}]`), http.StatusConflict, refused)
	if after := env.snapshot(t); !equalSnapshots(before, after) {
		t.Error("a refused take from a push queue wrote to Redis")
	}
	// Without push it is an ordinary queue again.
	env.must(t, http.MethodPatch, "/queue/p", `{"push":null}`, http.StatusNoContent)
	env.must(t, http.MethodGet, "/queue/p/job", "", http.StatusOK)
}

// TestJobCallback: a create takes a callback (refused as a queue's is,
// writing nothing); one given without a secret gets a server-made one,
// answered once; the job keeps it.
func TestJobCallback(t *testing.T) {
	t.Parallel()
	env := newEnv(t, Options{})
	env.must(t, http.MethodPut, "/queue/q", `{}`, http.StatusCreated)
	w := do(env.h, http.MethodPost, "/queue/q/job", `{"input":1,"callback":{"url":"http://127.0.0.1:9/done"}}`)
	if w.Code != http.StatusCreated || len(w.Header().Get(CallbackSecretHeader)) != 43 {
		t.Fatalf("create with a callback = %d %q, secret header %q", w.Code, w.Body, w.Header().Get(CallbackSecretHeader))
	}
	w = do(env.h, http.MethodPost, "/queue/q/job", `{"callback":{"url":"http://127.0.0.1:9/done","secret":"`+strings.Repeat("s", 16)+`"}}`)
	if w.Code != http.StatusCreated || w.Header().Get(CallbackSecretHeader) != "" {
		t.Errorf("create with a given secret = %d, secret header %q", w.Code, w.Header().Get(CallbackSecretHeader))
	}
	if got := do(env.h, http.MethodGet, "/job/1", "").Body.String(); strings.Contains(got, "secret") || strings.Contains(got, "127.0.0.1:9") {
		t.Errorf("GET /job/1 shows the callback: %s", got)
	}
	wantJSON(t, do(env.h, http.MethodGet, "/job/1?fields=id,callback", ""), http.StatusOK,
		`{"id":1,"callback":{"url":"http://127.0.0.1:9/done","on":["completed","failed","cancelled","timed_out"],"delivered_at":null,"attempts":0}}`)
	env.must(t, http.MethodPut, "/queue/bare", `{}`, http.StatusCreated)
	id := env.must(t, http.MethodPost, "/queue/bare/job", `{}`, http.StatusCreated)
	wantJSON(t, do(env.h, http.MethodGet, "/job/"+id+"?fields=callback", ""), http.StatusOK, `{"callback":null}`)
	before := env.snapshot(t)
	for body, want := range map[string]string{
		`{"callback":{"url":"http://10.0.0.1/"}}`:                    "Invalid callback: ",
		`{"callback":{"url":"http://127.0.0.1/","bogus":1}}`:         "Unknown field: callback.bogus",
		`{"callback":{"url":"http://127.0.0.1/"},"bogus":1}`:         "Unknown field: bogus",
		`{"callback":"http://127.0.0.1/"}`:                           "Invalid callback: expected an object or null, got a string",
		`{"callback":{"url":"http://127.0.0.1/","on":["queued"]}}`:   "Invalid callback: on: ",
		`{"callback":{"url":"http://127.0.0.1/","secret":"shorty"}}`: "Invalid callback: secret must be 16..256 bytes",
	} {
		w := do(env.h, http.MethodPost, "/queue/q/job", body)
		if w.Code != http.StatusBadRequest || !strings.HasPrefix(w.Body.String(), want) || strings.Contains(w.Body.String(), "shorty") {
			t.Errorf("create %s = %d %q, want 400 %q...", body, w.Code, w.Body, want)
		}
	}
	if after := env.snapshot(t); !equalSnapshots(before, after) {
		t.Error("a refused callback wrote to Redis")
	}
}
