package lambdahttp_test

import (
	"encoding/base64"
	"net/http"
	"reflect"
	"sort"
	"testing"

	"github.com/ocyless/ocyless/shared/lambdahttp"
)

func TestV1FixtureRESTAPI(t *testing.T) {
	t.Parallel()
	rec := &recorder{respond: func(w http.ResponseWriter, r *http.Request) {
		w.Header()["X-Multi"] = []string{"a", "b"}
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}}
	ev := awsFixture(t, "apigw-request.json")
	resp := invoke(t, lambdahttp.New(rec, nil), ev)
	if resp.StatusCode != http.StatusAccepted || resp.Body != `{"ok":true}` {
		t.Fatalf("response = %d %q, want 202", resp.StatusCode, resp.Body)
	}
	if got := resp.MultiValueHeaders["X-Multi"]; !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("multiValueHeaders X-Multi = %q, want [a b]", got)
	}
	s := rec.seen(t)
	if s.Method != http.MethodPost || s.Path != "/hello/world" {
		t.Errorf("request = %s %s, want POST /hello/world", s.Method, s.Path)
	}
	if s.PathValues["proxy"] != "hello/world" {
		t.Errorf("PathValue(proxy) = %q, want hello/world", s.PathValues["proxy"])
	}
	for key, values := range obj(ev, "multiValueQueryStringParameters") {
		var want []string
		for _, v := range values.([]any) {
			want = append(want, v.(string))
		}
		got := append([]string(nil), s.Query[key]...)
		sort.Strings(got)
		sort.Strings(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("query %s = %q, want %q", key, got, want)
		}
	}
	if got := s.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	if got := s.Header["Accept-Encoding"]; !reflect.DeepEqual(got, []string{"gzip, deflate"}) {
		t.Errorf("Accept-Encoding = %q, want one value", got)
	}
}

func TestV1DecodedPathAndBase64(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	ev := awsFixture(t, "apigw-request.json")
	ev["httpMethod"] = http.MethodGet
	ev["path"] = "/tag/50% off"
	ev["resource"] = "/tag/{name}"
	ev["pathParameters"] = map[string]any{"name": "50% off"}
	ev["body"] = base64.StdEncoding.EncodeToString([]byte{0, 1, 2})
	ev["isBase64Encoded"] = true
	resp := invoke(t, lambdahttp.New(rec, nil), ev)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d %q, want 200", resp.StatusCode, resp.Body)
	}
	s := rec.seen(t)
	if s.Path != "/tag/50% off" || s.PathValues["name"] != "50% off" || s.Body != "\x00\x01\x02" {
		t.Errorf("saw path %q name %q body %q", s.Path, s.PathValues["name"], s.Body)
	}
}

// TestV1HTTPAPIPayload10 is an HTTP API event in payload format 1.0
// ("version": "1.0"), which has the REST shape.
func TestV1HTTPAPIPayload10(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	ev := awsFixture(t, "apigw-request.json")
	ev["version"] = "1.0"
	resp := invoke(t, lambdahttp.New(rec, nil), ev)
	if resp.StatusCode != http.StatusOK || resp.MultiValueHeaders == nil {
		t.Fatalf("response = %+v, want a 1.0 (multiValueHeaders) 200", resp)
	}
	if s := rec.seen(t); s.Path != "/hello/world" {
		t.Errorf("path = %q", s.Path)
	}
}
