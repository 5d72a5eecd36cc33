package lambdahttp_test

import (
	"encoding/base64"
	"errors"
	"net/http"
	"reflect"
	"testing"

	"github.com/ocyless/ocyless/shared/lambdahttp"
)

func TestV2FixtureLambdaAuthorizer(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	h := lambdahttp.New(rec, nil)
	resp := invoke(t, h, awsFixture(t, "apigw-v2-request-lambda-authorizer.json"))
	if resp.StatusCode != http.StatusOK || resp.Body != "ok" {
		t.Fatalf("response = %d %q, want 200 \"ok\"", resp.StatusCode, resp.Body)
	}
	s := rec.seen(t)
	if s.Method != http.MethodGet || s.Path != "/my/path" {
		t.Errorf("request = %s %s, want GET /my/path", s.Method, s.Path)
	}
	if got, want := s.Query["parameter1"], []string{"value1", "value2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("query parameter1 = %q, want %q (repeated keys)", got, want)
	}
	if got := s.Header.Get("Cookie"); got != "cookie1; cookie2" {
		t.Errorf("Cookie = %q, want %q", got, "cookie1; cookie2")
	}
	if got := s.Header.Get("Header1"); got != "value1" {
		t.Errorf("Header1 = %q, want value1", got)
	}
	if got := s.PathValues["proxy"]; got != "hello/world" {
		t.Errorf("PathValue(proxy) = %q, want hello/world (from pathParameters)", got)
	}
	if s.Body != "{\r\n\t\"a\": 1\r\n}" {
		t.Errorf("body = %q", s.Body)
	}
	if s.RemoteAddr != "IP" {
		t.Errorf("RemoteAddr = %q, want the event's sourceIp", s.RemoteAddr)
	}
}

func TestV2FixturesOtherAuthorizers(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		"apigw-v2-request-no-authorizer.json",
		"apigw-v2-request-iam.json",
		"apigw-v2-request-jwt-authorizer.json",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			ev := awsFixture(t, name)
			resp := invoke(t, lambdahttp.New(rec, nil), ev)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status = %d, want 200", resp.StatusCode)
			}
			s := rec.seen(t)
			httpCtx := obj(obj(ev, "requestContext"), "http")
			if s.Method != httpCtx["method"] || s.Path != httpCtx["path"] {
				t.Errorf("request = %s %s, want %s %s", s.Method, s.Path, httpCtx["method"], httpCtx["path"])
			}
		})
	}
}

// TestV2DecodedPaths covers API Gateway's percent-decoded rawPath: the
// adapter re-escapes it so it parses, and path values come from
// pathParameters when the event has them.
func TestV2DecodedPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, rawPath string
		params        map[string]string
		wantPath      string
		wantEscaped   string
		wantName      string
	}{
		{"space", "/tag/a b", map[string]string{"name": "a b"}, "/tag/a b", "/tag/a%20b", "a b"},
		{"percent", "/tag/50%", map[string]string{"name": "50%"}, "/tag/50%", "/tag/50%25", "50%"},
		{"query and fragment chars", "/tag/what?x=1#y", map[string]string{"name": "what?x=1#y"}, "/tag/what?x=1#y", "/tag/what%3Fx=1%23y", "what?x=1#y"},
		{"unicode", "/tag/naïve ☃", map[string]string{"name": "naïve ☃"}, "/tag/naïve ☃", "/tag/na%C3%AFve%20%E2%98%83", "naïve ☃"},
		// A decoded %2F is a real slash in rawPath; only pathParameters know better.
		{"slash from pathParameters", "/tag/a/b", map[string]string{"name": "a/b"}, "/tag/a/b", "/tag/a/b", "a/b"},
		{"no pathParameters", "/tag/x y", nil, "/tag/x y", "/tag/x%20y", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			resp := invoke(t, lambdahttp.New(rec, nil), v2Event(t, http.MethodGet, tt.rawPath, tt.params))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status = %d %q, want 200", resp.StatusCode, resp.Body)
			}
			s := rec.seen(t)
			if s.Path != tt.wantPath || s.EscapedPath != tt.wantEscaped {
				t.Errorf("path = %q (escaped %q), want %q (%q)", s.Path, s.EscapedPath, tt.wantPath, tt.wantEscaped)
			}
			if s.RawQuery != "" {
				t.Errorf("RawQuery = %q, want empty: a decoded '?' is part of the path", s.RawQuery)
			}
			if got := s.PathValues["name"]; got != tt.wantName {
				t.Errorf("PathValue(name) = %q, want %q", got, tt.wantName)
			}
		})
	}
}

// TestV2ThroughServeMux checks that re-escaped paths route through the
// ServeMux patterns the route table uses, and that a mux-matched value
// equals API Gateway's.
func TestV2ThroughServeMux(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	mux := http.NewServeMux()
	mux.Handle("GET /tag/{name}", rec)
	h := lambdahttp.New(mux, nil)
	for _, tag := range []string{"a b", "50%", "x?y", "#hash", "plain"} {
		resp := invoke(t, h, v2Event(t, http.MethodGet, "/tag/"+tag, map[string]string{"name": tag}))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("tag %q: status = %d, want 200", tag, resp.StatusCode)
		}
		s := rec.seen(t)
		if s.PathValues["name"] != tag || s.Pattern != "GET /tag/{name}" {
			t.Errorf("tag %q: PathValue(name) = %q via %q", tag, s.PathValues["name"], s.Pattern)
		}
	}
	// Without pathParameters, the mux alone decodes the re-escaped path.
	if resp := invoke(t, h, v2Event(t, http.MethodGet, "/tag/a b", nil)); resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d, want 200", resp.StatusCode)
	}
	if s := rec.seen(t); s.PathValues["name"] != "a b" {
		t.Errorf("PathValue(name) = %q, want %q", s.PathValues["name"], "a b")
	}
}

func TestV2Request(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	h := lambdahttp.New(rec, nil)

	t.Run("base64 body", func(t *testing.T) {
		ev := v2Event(t, http.MethodPut, "/job/7/output", map[string]string{"id": "7"})
		raw := "\x00\x01\xffbinary"
		ev["body"] = base64.StdEncoding.EncodeToString([]byte(raw))
		ev["isBase64Encoded"] = true
		invoke(t, h, ev)
		if s := rec.seen(t); s.Body != raw || s.Method != http.MethodPut || s.PathValues["id"] != "7" {
			t.Errorf("saw %s body %q id %q, want PUT %q id 7", s.Method, s.Body, s.PathValues["id"], raw)
		}
	})
	t.Run("bad base64 body is a 400", func(t *testing.T) {
		ev := v2Event(t, http.MethodPut, "/job/7/output", nil)
		ev["body"] = "%%%"
		ev["isBase64Encoded"] = true
		if resp := invoke(t, h, ev); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("status = %d, want 400", resp.StatusCode)
		}
	})
	t.Run("query string", func(t *testing.T) {
		ev := v2Event(t, http.MethodGet, "/job/1", map[string]string{"id": "1"})
		ev["rawQueryString"] = "fields=id,status&a=1&a=2&sp=x%20y"
		invoke(t, h, ev)
		s := rec.seen(t)
		want := map[string][]string{"fields": {"id,status"}, "a": {"1", "2"}, "sp": {"x y"}}
		if !reflect.DeepEqual(s.Query, want) {
			t.Errorf("query = %v, want %v", s.Query, want)
		}
	})
	t.Run("headers keep commas", func(t *testing.T) {
		ev := v2Event(t, http.MethodPost, "/queue/q/job", map[string]string{"name": "q"})
		ev["headers"] = map[string]any{
			"content-type": "application/json; charset=utf-8",
			"x-list":       "a, b,c",
			"accept":       "application/json, text/plain",
			"host":         "api.example.com",
		}
		ev["body"] = `{"input":1}`
		invoke(t, h, ev)
		s := rec.seen(t)
		for k, want := range map[string][]string{
			"Content-Type": {"application/json; charset=utf-8"},
			"X-List":       {"a, b,c"},
			"Accept":       {"application/json, text/plain"},
		} {
			if got := s.Header[k]; !reflect.DeepEqual(got, want) {
				t.Errorf("header %s = %q, want %q", k, got, want)
			}
		}
		if s.Host != "api.example.com" || s.Header.Get("Host") != "" {
			t.Errorf("Host = %q (header %q), want api.example.com in r.Host only", s.Host, s.Header.Get("Host"))
		}
		if s.Body != `{"input":1}` {
			t.Errorf("body = %q", s.Body)
		}
	})
	t.Run("named stage is stripped", func(t *testing.T) {
		ev := v2Event(t, http.MethodGet, "/prod/queue/q", map[string]string{"name": "q"})
		obj(ev, "requestContext")["stage"] = "prod"
		invoke(t, h, ev)
		if s := rec.seen(t); s.Path != "/queue/q" {
			t.Errorf("path = %q, want /queue/q", s.Path)
		}
	})
	t.Run("rawPath missing uses requestContext.http.path", func(t *testing.T) {
		ev := v2Event(t, http.MethodGet, "/info", nil)
		delete(ev, "rawPath")
		invoke(t, h, ev)
		if s := rec.seen(t); s.Path != "/info" {
			t.Errorf("path = %q, want /info", s.Path)
		}
	})
	t.Run("invalid method is a 400", func(t *testing.T) {
		ev := v2Event(t, "GET X", "/info", nil)
		if resp := invoke(t, h, ev); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("status = %d, want 400", resp.StatusCode)
		}
	})
}

func TestV2Response(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		respond func(w http.ResponseWriter, r *http.Request)
		check   func(t *testing.T, resp response)
	}{
		{"status, headers and cookies", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Location", "/job/1")
			w.Header()["X-Multi"] = []string{"a", "b"}
			http.SetCookie(w, &http.Cookie{Name: "c1", Value: "v1"})
			http.SetCookie(w, &http.Cookie{Name: "c2", Value: "v2"})
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte("1"))
		}, func(t *testing.T, resp response) {
			if resp.StatusCode != http.StatusCreated || resp.Body != "1" || resp.IsBase64Encoded {
				t.Errorf("response = %d %q base64=%v, want 201 \"1\"", resp.StatusCode, resp.Body, resp.IsBase64Encoded)
			}
			want := map[string]string{"Content-Type": "application/json", "Location": "/job/1", "X-Multi": "a,b"}
			if !reflect.DeepEqual(resp.Headers, want) {
				t.Errorf("headers = %v, want %v", resp.Headers, want)
			}
			if !reflect.DeepEqual(resp.Cookies, []string{"c1=v1", "c2=v2"}) {
				t.Errorf("cookies = %q", resp.Cookies)
			}
		}},
		{"binary body is base64", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write([]byte{0xff, 0xfe, 0x00})
		}, func(t *testing.T, resp response) {
			if !resp.IsBase64Encoded || resp.Body != base64.StdEncoding.EncodeToString([]byte{0xff, 0xfe, 0x00}) {
				t.Errorf("body = %q base64=%v", resp.Body, resp.IsBase64Encoded)
			}
		}},
		{"nothing written is a 200", func(w http.ResponseWriter, r *http.Request) {},
			func(t *testing.T, resp response) {
				if resp.StatusCode != http.StatusOK || resp.Body != "" {
					t.Errorf("response = %d %q, want 200 and no body", resp.StatusCode, resp.Body)
				}
			}},
		{"204", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) },
			func(t *testing.T, resp response) {
				if resp.StatusCode != http.StatusNoContent {
					t.Errorf("status = %d, want 204", resp.StatusCode)
				}
			}},
		{"second WriteHeader ignored", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusConflict)
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte("Cannot change status"))
		}, func(t *testing.T, resp response) {
			if resp.StatusCode != http.StatusConflict || resp.Body != "Cannot change status" {
				t.Errorf("response = %d %q, want 409", resp.StatusCode, resp.Body)
			}
		}},
		{"panic is a 500", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Partial", "1")
			_, _ = w.Write([]byte("partial"))
			panic("boom")
		}, func(t *testing.T, resp response) {
			if resp.StatusCode != http.StatusInternalServerError || resp.Body == "partial" || resp.Headers["X-Partial"] != "" {
				t.Errorf("response = %d %q %v, want a clean 500", resp.StatusCode, resp.Body, resp.Headers)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := lambdahttp.New(&recorder{respond: tt.respond}, nil)
			tt.check(t, invoke(t, h, v2Event(t, http.MethodGet, "/x", nil)))
			// The same Handler keeps serving (warm reuse after a panic).
			if resp := invoke(t, h, v2Event(t, http.MethodGet, "/x", nil)); resp.StatusCode == 0 {
				t.Error("second invocation failed")
			}
		})
	}
}

func TestNotAnHTTPEvent(t *testing.T) {
	t.Parallel()
	h := lambdahttp.New(&recorder{}, nil)
	for _, payload := range []string{`{}`, `{"sweep":"timeouts"}`, `[]`, `"x"`, `{"version":"0","source":"aws.scheduler","detail":"{}"}`} {
		_, err := h.Invoke(t.Context(), []byte(payload))
		if !errors.Is(err, lambdahttp.ErrNotHTTPEvent) && payload != `[]` && payload != `"x"` {
			t.Errorf("Invoke(%s) = %v, want ErrNotHTTPEvent", payload, err)
		}
		if err == nil {
			t.Errorf("Invoke(%s) = nil error", payload)
		}
	}
	if _, err := h.Invoke(t.Context(), []byte("not json")); err == nil {
		t.Error("Invoke(not json) = nil error")
	}
}
