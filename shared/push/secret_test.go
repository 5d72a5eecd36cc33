package push

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// TestSecretNeverInLogsOrErrors drives deliveries through every kind of
// answer with a debug-level captured log, and decodes bad settings, then
// looks for the secret (and its hex form) in every log line, outcome and
// error text. A URL's query (a credential often lives there) must not reach
// the log either.
func TestSecretNeverInLogsOrErrors(t *testing.T) {
	answers := []http.HandlerFunc{
		func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"ok":true}`) },
		func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) },
		func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Retry-After", "5"); w.WriteHeader(429) },
		func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/", http.StatusFound)
		},
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"bad`)
		},
		func(w http.ResponseWriter, r *http.Request) {
			// An endpoint that echoes the signature header back.
			w.WriteHeader(401)
			io.WriteString(w, "bad signature "+r.Header.Get(SignatureHeader))
		},
	}
	log, buf := captureLog()
	var texts []string
	for _, a := range answers {
		srv, _ := endpoint(t, a)
		for _, batch := range []int{1, 3} {
			outs := newDeliverer(t, Options{Logger: log}).Deliver(context.Background(), Delivery{
				Target: testTarget(srv.URL+"/hook?token=query-credential", batch), Jobs: []Job{job(1, `1`)}, Timeout: 5 * time.Second})
			for _, o := range outs {
				if o.Error != nil {
					texts = append(texts, o.Error.Group, o.Error.Message)
				}
			}
		}
	}
	// Unreachable, refused and timed-out deliveries log too.
	newDeliverer(t, Options{Logger: log}).Deliver(context.Background(), Delivery{Target: testTarget("http://127.0.0.1:1/?token=query-credential", 1), Jobs: []Job{job(1, `1`)}, Timeout: time.Second})
	newDeliverer(t, Options{Logger: log, Policy: mustPolicy(t, nil, AWS)}).Deliver(context.Background(), Delivery{Target: testTarget("https://example.com/?token=query-credential", 1), Jobs: []Job{job(1, `1`)}, Timeout: time.Second})

	for _, in := range []string{
		`{"url": "http://127.0.0.1/", "secret": "` + testSecret[:10] + `"}`,
		`{"url": "http://127.0.0.1/", "secret": "` + strings.Repeat(testSecret, 10) + `"}`,
		`{"url": "http://example.com/", "secret": "` + testSecret + `"}`,
		`{"url": "http://127.0.0.1/", "secret": "` + testSecret + `", "x": 1}`,
	} {
		_, err := DecodeTarget([]byte(in), localPolicy(t))
		texts = append(texts, ocypod.ErrorMessage(err), err.Error())
		_, err = DecodeCallback([]byte(in), localPolicy(t))
		texts = append(texts, ocypod.ErrorMessage(err), err.Error())
	}
	logText := buf.String()
	if !strings.Contains(logText, "push delivery failed") || !strings.Contains(logText, "push delivery answered") {
		t.Fatalf("the log misses deliveries: %s", logText)
	}
	texts = append(texts, logText)
	for _, s := range texts {
		for _, leak := range []string{testSecret, testSecret[:10], hex.EncodeToString([]byte(testSecret))} {
			if strings.Contains(s, leak) {
				t.Errorf("%q shows up in %q", leak, s)
			}
		}
	}
	if strings.Contains(logText, "query-credential") {
		t.Errorf("a URL's query is in the log: %s", logText)
	}
}
