package push

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// received is what a test endpoint saw of one request.
type received struct {
	header http.Header
	body   []byte
}

// endpoint is an httptest server that records each request and answers
// with answer.
func endpoint(t *testing.T, answer http.HandlerFunc) (*httptest.Server, chan received) {
	t.Helper()
	got := make(chan received, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- received{header: r.Header.Clone(), body: b}
		answer(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func newDeliverer(t *testing.T, opts Options) *Deliverer {
	t.Helper()
	if opts.Policy == nil {
		opts.Policy = localPolicy(t)
	}
	if opts.Logger == nil {
		opts.Logger, _ = captureLog()
	}
	d := New(opts)
	t.Cleanup(d.Close)
	return d
}

var sigRE = regexp.MustCompile(`^t=([0-9]+),v1=([0-9a-f]{64})$`)

// verifyIndependently checks a signature without the package's code.
func verifyIndependently(t *testing.T, header string, body []byte, secret string, wantT int64) {
	t.Helper()
	m := sigRE.FindStringSubmatch(header)
	if m == nil {
		t.Fatalf("Ocyless-Signature %q: not t=<secs>,v1=<hex>", header)
	}
	if m[1] != fmt.Sprint(wantT) {
		t.Errorf("signature time %s, want %d", m[1], wantT)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	io.WriteString(mac, m[1]+"."+string(body))
	if want := hex.EncodeToString(mac.Sum(nil)); m[2] != want {
		t.Errorf("v1=%s, want %s", m[2], want)
	}
}

func TestDeliverSignedPostCompletesWithOutput(t *testing.T) {
	clock := &fixedClock{t: time.Unix(1_800_000_000, 0)}
	srv, got := endpoint(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, ` {"sum": 3} `)
	})
	d := newDeliverer(t, Options{Now: clock.Now})
	outs := d.Deliver(context.Background(), Delivery{Target: testTarget(srv.URL+"/work?x=1", 1),
		Jobs: []Job{{ID: 42, Attempt: 3, Queue: "adder", Input: []byte(`{"a":1, "b":2}`)}}, Timeout: 5 * time.Second})
	r := <-got
	if want := `{"id":42,"attempt":3,"queue":"adder","input":{"a":1,"b":2}}`; string(r.body) != want {
		t.Errorf("body %s, want %s", r.body, want)
	}
	for k, want := range map[string]string{"Content-Type": "application/json", "Ocyless-Job-Id": "42", "Ocyless-Attempt": "3"} {
		if v := r.header.Get(k); v != want {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
	verifyIndependently(t, r.header.Get("Ocyless-Signature"), r.body, testSecret, clock.t.Unix())
	if err := Verify([]byte(testSecret), r.header.Get("Ocyless-Signature"), r.body, clock.t, 0); err != nil {
		t.Errorf("Verify: %v", err)
	}
	if len(outs) != 1 || outs[0].Result != Completed || string(outs[0].Output) != `{"sum": 3}` || outs[0].Error != nil || outs[0].JobID != 42 || outs[0].Attempt != 3 {
		t.Fatalf("outcome %+v", outs)
	}
}

func TestDeliverAnswers(t *testing.T) {
	cases := []struct {
		name        string
		status      int
		contentType string
		body        string
		result      Result
		output      string // "" for none
		group       string
		message     string // substring
	}{
		{"empty 200", 200, "", "", Completed, "", "", ""},
		{"204", 204, "", "", Completed, "", "", ""},
		{"whitespace only", 200, "application/json", " \n", Completed, "", "", ""},
		{"text becomes a JSON string", 200, "text/plain", "all done \"ok\"", Completed, `"all done \"ok\""`, "", ""},
		{"JSON without content type", 202, "text/plain", `[1,2]`, Completed, `[1,2]`, "", ""},
		{"invalid UTF-8 text", 200, "text/plain", "a\xffb", Completed, "\"a\uFFFDb\"", "", ""},
		{"invalid JSON declared as JSON", 200, "application/json", `{"a":`, Failed, "", "push_http_200", "not valid JSON"},
		{"invalid JSON declared as +json", 201, "application/problem+json; charset=utf-8", `nope`, Failed, "", "push_http_201", "not valid JSON"},
		{"500 keeps the body", 500, "text/plain", "database down", Failed, "", "push_http_500", "HTTP 500 Internal Server Error: database down"},
		{"404", 404, "", "", Failed, "", "push_http_404", "HTTP 404 Not Found"},
		{"long error body is cut", 502, "", strings.Repeat("é", 5000), Failed, "", "push_http_502", "HTTP 502"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, _ := endpoint(t, func(w http.ResponseWriter, r *http.Request) {
				if c.contentType != "" {
					w.Header().Set("Content-Type", c.contentType)
				}
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			})
			outs := newDeliverer(t, Options{}).Deliver(context.Background(), Delivery{Target: testTarget(srv.URL, 1), Jobs: []Job{job(1, `null`)}, Timeout: 5 * time.Second})
			o := outs[0]
			if o.Result != c.result || string(o.Output) != c.output {
				t.Fatalf("result %v output %q, want %v %q (error %+v)", o.Result, o.Output, c.result, c.output, o.Error)
			}
			if c.group == "" {
				if o.Error != nil {
					t.Fatalf("error %+v", o.Error)
				}
				return
			}
			if o.Error == nil || o.Error.Group != c.group || !strings.Contains(o.Error.Message, c.message) {
				t.Fatalf("error %+v, want group %s message with %q", o.Error, c.group, c.message)
			}
			if len(o.Error.Message) > MaxMessage {
				t.Fatalf("message of %d bytes", len(o.Error.Message))
			}
		})
	}
}

func TestDeliverRedirectIsNotFollowed(t *testing.T) {
	var hits atomic.Int32
	other, _ := endpoint(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	for _, code := range []int{301, 302, 303, 307, 308} {
		srv, _ := endpoint(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/elsewhere?token=abc", code)
		})
		o := newDeliverer(t, Options{}).Deliver(context.Background(), Delivery{Target: testTarget(srv.URL, 1), Jobs: []Job{job(1, `1`)}, Timeout: 5 * time.Second})[0]
		if o.Result != Failed || o.Error.Group != fmt.Sprintf("push_http_%d", code) || !strings.Contains(o.Error.Message, "redirects are not followed") {
			t.Errorf("%d: %+v %+v", code, o, o.Error)
		}
		if strings.Contains(o.Error.Message, "token=abc") {
			t.Errorf("%d: the Location's query is in the message: %q", code, o.Error.Message)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the redirect target was called %d times", n)
	}
}

func TestDeliverRetryAfter(t *testing.T) {
	clock := &fixedClock{t: time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)}
	cases := []struct {
		status int
		header string
		want   time.Time
	}{
		{429, "120", clock.t.Add(120 * time.Second)},
		{503, "Wed, 25 Nov 2026 01:30:00 GMT", clock.t.Add(30 * time.Minute)},
		{429, "0", clock.t},
		{429, "Wed, 25 Nov 2026 00:00:00 GMT", clock.t}, // in the past: now
		{429, "999999999", clock.t.Add(MaxRetryAfter)},
		{503, "soon", time.Time{}},
		{500, "", time.Time{}},
	}
	for _, c := range cases {
		srv, _ := endpoint(t, func(w http.ResponseWriter, r *http.Request) {
			if c.header != "" {
				w.Header().Set("Retry-After", c.header)
			}
			w.WriteHeader(c.status)
		})
		o := newDeliverer(t, Options{Now: clock.Now}).Deliver(context.Background(), Delivery{Target: testTarget(srv.URL, 1), Jobs: []Job{job(1, `1`)}, Timeout: 5 * time.Second})[0]
		if o.Result != Failed || o.Error.Group != fmt.Sprintf("push_http_%d", c.status) || !o.RetryAt.Equal(c.want) {
			t.Errorf("%d Retry-After %q: %v %+v retry at %v, want %v", c.status, c.header, o.Result, o.Error, o.RetryAt, c.want)
		}
	}
}

// TestDeliverHangTimesOut: a target that accepts and never answers fails
// the attempt as timed out when the delivery's timeout is over.
func TestDeliverHangTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv, _ := endpoint(t, func(w http.ResponseWriter, r *http.Request) { <-release })
	defer close(release) // before srv.Close (cleanup) waits for the handler
	start := time.Now()
	o := newDeliverer(t, Options{}).Deliver(context.Background(), Delivery{Target: testTarget(srv.URL, 1), Jobs: []Job{job(7, `1`)}, Timeout: 300 * time.Millisecond})[0]
	if o.Result != TimedOut || o.Error.Group != GroupTimeout || !strings.Contains(o.Error.Message, "no complete answer within 300ms") {
		t.Fatalf("%v %+v", o.Result, o.Error)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("took %v", took)
	}
}

// TestDeliverSlowAnswer: an answer that arrives in pieces completes while
// within the timeout, and times out when its end never comes.
func TestDeliverSlowAnswer(t *testing.T) {
	t.Run("within the timeout", func(t *testing.T) {
		halfSent, rest := make(chan struct{}), make(chan struct{})
		srv, _ := endpoint(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"slow":`)
			w.(http.Flusher).Flush()
			close(halfSent)
			<-rest
			io.WriteString(w, `true}`)
		})
		go func() { <-halfSent; close(rest) }()
		o := newDeliverer(t, Options{}).Deliver(context.Background(), Delivery{Target: testTarget(srv.URL, 1), Jobs: []Job{job(1, `1`)}, Timeout: 10 * time.Second})[0]
		if o.Result != Completed || string(o.Output) != `{"slow":true}` {
			t.Fatalf("%v %s %+v", o.Result, o.Output, o.Error)
		}
	})
	t.Run("body never ends", func(t *testing.T) {
		release := make(chan struct{})
		srv, _ := endpoint(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"slow":`)
			w.(http.Flusher).Flush()
			<-release
		})
		defer close(release)
		o := newDeliverer(t, Options{}).Deliver(context.Background(), Delivery{Target: testTarget(srv.URL, 1), Jobs: []Job{job(1, `1`)}, Timeout: 300 * time.Millisecond})[0]
		if o.Result != TimedOut || o.Error.Group != GroupTimeout || !strings.Contains(o.Error.Message, "after HTTP 200") {
			t.Fatalf("%v %+v", o.Result, o.Error)
		}
	})
}

// TestDeliverHugeAnswer: a 10 MB answer fails the attempt without being
// read whole.
func TestDeliverHugeAnswer(t *testing.T) {
	for _, status := range []int{200, 500} {
		var written atomic.Int64
		srv, _ := endpoint(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			chunk := []byte(strings.Repeat("x", 64<<10))
			for range 160 { // 10 MiB
				n, err := w.Write(chunk)
				written.Add(int64(n))
				if err != nil {
					return
				}
			}
		})
		o := newDeliverer(t, Options{}).Deliver(context.Background(), Delivery{Target: testTarget(srv.URL, 1), Jobs: []Job{job(1, `1`)}, Timeout: 10 * time.Second})[0]
		if o.Result != Failed || o.Error.Group != fmt.Sprintf("push_http_%d", status) || !strings.Contains(o.Error.Message, "answer larger than 1048576 bytes") {
			t.Fatalf("%d: %v %+v", status, o.Result, o.Error)
		}
		if o.Output != nil {
			t.Fatalf("output of %d bytes", len(o.Output))
		}
	}
	// An endless answer is cut at the bound, not read until the timeout.
	srv, _ := endpoint(t, func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("y", 64<<10))
		for { // until the client hangs up
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	o := newDeliverer(t, Options{}).Deliver(context.Background(), Delivery{Target: testTarget(srv.URL, 1), Jobs: []Job{job(1, `1`)}, Timeout: 3 * time.Second})[0]
	if o.Result != Failed || o.Error.Group != "push_http_200" || !strings.Contains(o.Error.Message, "answer larger than") {
		t.Fatalf("endless answer: %v %+v", o.Result, o.Error)
	}
}

// rawServer accepts TCP connections and hands each to serve.
func rawServer(t *testing.T, serve func(c *net.TCPConn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c.(*net.TCPConn))
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

// readRequest reads the request head and its body.
func readRequest(c net.Conn) {
	req, err := http.ReadRequest(bufioReader(c))
	if err == nil {
		io.Copy(io.Discard, req.Body)
	}
}

func reset(c *net.TCPConn) {
	c.SetLinger(0) // close sends RST
	c.Close()
}

func TestDeliverConnectionReset(t *testing.T) {
	cases := map[string]func(c *net.TCPConn){
		"before the answer": func(c *net.TCPConn) { readRequest(c); reset(c) },
		"in the answer's body": func(c *net.TCPConn) {
			readRequest(c)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"partial\":")
			reset(c)
		},
		"garbage instead of HTTP": func(c *net.TCPConn) { readRequest(c); io.WriteString(c, "SSH-2.0-nope\r\n"); c.Close() },
	}
	for name, serve := range cases {
		t.Run(name, func(t *testing.T) {
			url := rawServer(t, serve)
			o := newDeliverer(t, Options{}).Deliver(context.Background(), Delivery{Target: testTarget(url, 1), Jobs: []Job{job(1, `1`)}, Timeout: 5 * time.Second})[0]
			if o.Result != Failed || o.Error.Group != GroupUnreachable {
				t.Fatalf("%v %+v", o.Result, o.Error)
			}
			t.Log(o.Error.Message)
		})
	}
}

func TestDeliverUnreachablePort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	o := newDeliverer(t, Options{}).Deliver(context.Background(), Delivery{Target: testTarget("http://"+addr+"/", 1), Jobs: []Job{job(1, `1`)}, Timeout: 5 * time.Second})[0]
	if o.Result != Failed || o.Error.Group != GroupUnreachable || !strings.Contains(o.Error.Message, "connection refused") {
		t.Fatalf("%v %+v", o.Result, o.Error)
	}
}

func TestDeliverBatch(t *testing.T) {
	var answer atomic.Value
	srv, got := endpoint(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer.Load().(string))
	})
	d := newDeliverer(t, Options{})
	jobs := []Job{job(1, `{"n":1}`), job(2, `"two"`), job(3, ``)}
	deliver := func(a string) []Outcome {
		answer.Store(a)
		return d.Deliver(context.Background(), Delivery{Target: testTarget(srv.URL, 5), Jobs: jobs, Timeout: 5 * time.Second})
	}

	outs := deliver(`{"failures": [{"id": 2, "error": "bad input"}, {"id": "3", "error": {"group": "mine", "message": "nope"}}, {"id": 99}]}`)
	r := <-got
	if want := `[{"id":1,"attempt":1,"queue":"q","input":{"n":1}},{"id":2,"attempt":1,"queue":"q","input":"two"},{"id":3,"attempt":1,"queue":"q","input":null}]`; string(r.body) != want {
		t.Errorf("body %s\nwant %s", r.body, want)
	}
	if r.header.Get("Ocyless-Job-Id") != "" || r.header.Get("Ocyless-Attempt") != "" {
		t.Errorf("batch headers %v", r.header)
	}
	verifyIndependently(t, r.header.Get("Ocyless-Signature"), r.body, testSecret, sigTime(t, r.header))
	if outs[0].Result != Completed || outs[0].Output != nil ||
		outs[1].Result != Failed || *outs[1].Error != (Failure{Message: "bad input"}) ||
		outs[2].Result != Failed || *outs[2].Error != (Failure{Group: "mine", Message: "nope"}) {
		t.Fatalf("outcomes %+v %+v %+v", outs[0], outs[1], outs[2])
	}

	outs = deliver(`{"failures": [{"id": 1}]}`)
	<-got
	if outs[0].Result != Failed || outs[0].Error != nil || outs[1].Result != Completed || outs[2].Result != Completed {
		t.Fatalf("failure without error: %+v", outs)
	}

	for _, a := range []string{`{"ok": true}`, `[]`, ``, `{"failures": []}`} {
		outs = deliver(a)
		<-got
		for _, o := range outs {
			if o.Result != Completed {
				t.Fatalf("answer %s: %+v", a, outs)
			}
		}
	}

	for _, a := range []string{`{"failures": "all"}`, `{"failures": [{"error": "x"}]}`, `{"failures": [`} {
		outs = deliver(a)
		<-got
		for _, o := range outs {
			if o.Result != Failed || o.Error.Group != "push_http_200" {
				t.Fatalf("answer %s: %+v", a, outs)
			}
		}
	}

	// A batch target gets an array even for one job.
	answer.Store(``)
	d.Deliver(context.Background(), Delivery{Target: testTarget(srv.URL, 5), Jobs: jobs[:1], Timeout: 5 * time.Second})
	if r := <-got; !strings.HasPrefix(string(r.body), `[{"id":1,`) {
		t.Fatalf("one job for batch 5: %s", r.body)
	}
}

func sigTime(t *testing.T, h http.Header) int64 {
	t.Helper()
	var ts int64
	fmt.Sscanf(h.Get("Ocyless-Signature"), "t=%d,", &ts)
	return ts
}

func TestDeliverBadDeliveries(t *testing.T) {
	d := newDeliverer(t, Options{})
	cases := map[string]Delivery{
		"too many jobs": {Target: testTarget("http://127.0.0.1:1/", 1), Jobs: []Job{job(1, `1`), job(2, `2`)}},
		"invalid input": {Target: testTarget("http://127.0.0.1:1/", 1), Jobs: []Job{job(1, `{bad`)}},
	}
	for name, dl := range cases {
		outs := d.Deliver(context.Background(), dl)
		if len(outs) != len(dl.Jobs) {
			t.Fatalf("%s: %d outcomes for %d jobs", name, len(outs), len(dl.Jobs))
		}
		for _, o := range outs {
			if o.Result != Failed || o.Error.Group != GroupUnreachable {
				t.Errorf("%s: %+v", name, o)
			}
		}
	}
}

func TestDeliverInterruptedByShutdown(t *testing.T) {
	release := make(chan struct{})
	reached := make(chan struct{})
	srv, _ := endpoint(t, func(w http.ResponseWriter, r *http.Request) { close(reached); <-release })
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-reached; cancel() }()
	o := newDeliverer(t, Options{}).Deliver(ctx, Delivery{Target: testTarget(srv.URL, 1), Jobs: []Job{job(1, `1`)}, Timeout: time.Minute})[0]
	if o.Result != Failed || o.Error.Group != GroupUnreachable || !strings.Contains(o.Error.Message, "interrupted") {
		t.Fatalf("%v %+v", o.Result, o.Error)
	}
}

func TestEncodeBodyKeepsRawInput(t *testing.T) {
	b, err := EncodeBody(testTarget("http://x/", 1), []Job{{ID: 18446744073709551615, Attempt: 1, Queue: "q", Input: []byte(`{"big": 12345678901234567890, "f": 1.50}`)}})
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]json.RawMessage
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if string(v["id"]) != "18446744073709551615" || string(v["input"]) != `{"big":12345678901234567890,"f":1.50}` {
		t.Fatalf("%s", b)
	}
}
