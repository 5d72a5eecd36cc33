package lambdahttp_test

import (
	"encoding/base64"
	"net/http"
	"reflect"
	"testing"

	"github.com/ocyless/ocyless/shared/lambdahttp"
)

// TestALBFixtures: aws-lambda-go's own load balancer events, with and
// without multi-value headers; the answer uses the same header mode and a
// "<code> <reason>" status description.
func TestALBFixtures(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		file  string
		multi bool
	}{
		{"alb-lambda-target-request-multivalue-headers.json", true},
		{"alb-lambda-target-request-headers-only.json", false},
	} {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{respond: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Add("X-Many", "a")
				w.Header().Add("X-Many", "b")
				_, _ = w.Write([]byte(`{"ok":true}`))
			}}
			resp := invoke(t, lambdahttp.New(rec, nil), awsFixture(t, tt.file))
			if resp.StatusCode != http.StatusOK || resp.StatusDescription != "200 OK" || resp.Body != `{"ok":true}` {
				t.Fatalf("response = %d %q %q", resp.StatusCode, resp.StatusDescription, resp.Body)
			}
			if tt.multi {
				if got := resp.MultiValueHeaders["X-Many"]; !reflect.DeepEqual(got, []string{"a", "b"}) || resp.Headers != nil {
					t.Errorf("multi-value answer headers %v / %v", resp.MultiValueHeaders, resp.Headers)
				}
			} else if resp.Headers["X-Many"] != "a, b" || resp.Headers["Content-Type"] != "application/json" || resp.MultiValueHeaders != nil {
				t.Errorf("single-value answer headers %v / %v", resp.Headers, resp.MultiValueHeaders)
			}
			s := rec.seen(t)
			if s.Method != http.MethodGet || s.Path != "/" || !reflect.DeepEqual(s.Query["key"], []string{"hello"}) {
				t.Errorf("request = %s %s %v", s.Method, s.Path, s.Query)
			}
			if s.Header.Get("X-Myheader") != "123" || s.Host == "" {
				t.Errorf("headers %v, host %q", s.Header, s.Host)
			}
		})
	}
}

// TestALBEncoding: the load balancer passes the path and the query as the
// client encoded them; the handler sees them decoded once, repeated keys
// whole, and a body sent as base64 decoded.
func TestALBEncoding(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	h := lambdahttp.New(rec, nil)
	ev := awsFixture(t, "alb-lambda-target-request-multivalue-headers.json")
	ev["httpMethod"] = "POST"
	ev["path"] = "/tag/a%20b%3Fc"
	ev["multiValueQueryStringParameters"] = map[string]any{
		"queues": []any{"a%2Cb"},
		"fields": []any{"id", "status"},
		"w%20x":  []any{"y%26z"},
	}
	ev["body"] = base64.StdEncoding.EncodeToString([]byte(`{"input":1}`))
	ev["isBase64Encoded"] = true
	if resp := invoke(t, h, ev); resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	s := rec.seen(t)
	if s.Path != "/tag/a b?c" {
		t.Errorf("path %q, want the decoded /tag/a b?c", s.Path)
	}
	for k, want := range map[string][]string{"queues": {"a,b"}, "fields": {"id", "status"}, "w x": {"y&z"}} {
		if got := s.Query[k]; !reflect.DeepEqual(got, want) {
			t.Errorf("query %q = %q, want %q", k, got, want)
		}
	}
	if s.Method != http.MethodPost || s.Body != `{"input":1}` {
		t.Errorf("request %s body %q", s.Method, s.Body)
	}

	// An encoding that does not decode is the load balancer's client's
	// mistake: 400, and the handler never runs.
	ev["multiValueQueryStringParameters"] = map[string]any{"q": []any{"%zz"}}
	if resp := invoke(t, h, ev); resp.StatusCode != http.StatusBadRequest || resp.StatusDescription != "400 Bad Request" {
		t.Errorf("bad escape: %d %q, want 400", resp.StatusCode, resp.StatusDescription)
	}
	if rec.last != nil {
		t.Error("the handler ran for an undecodable query")
	}
}
