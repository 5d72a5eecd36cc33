package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/ocyless/ocyless/shared/config"
)

// send is doErr with extra headers; "Host" sets the Host header. It returns
// the status, body and headers, failing the test when the request fails.
func (s *testServer) send(t *testing.T, method, path, body string, hdr map[string]string) (int, string, http.Header) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, s.base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s %v: %v", method, path, hdr, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

// wantForbidden checks a 403 with a plain-text sentence containing want
// and nosniff.
func (s *testServer) wantForbidden(t *testing.T, method, path, body string, hdr map[string]string, want string) {
	t.Helper()
	code, got, h := s.send(t, method, path, body, hdr)
	if code != http.StatusForbidden || !strings.HasPrefix(got, "Forbidden: ") || !strings.Contains(got, want) {
		t.Errorf("%s %s with %v = %d %q, want 403 containing %q", method, path, hdr, code, got, want)
	}
	if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("%s %s with %v: headers %v, want text/plain and nosniff", method, path, hdr, h)
	}
}

// TestCrossSiteRefused is a web page's attack on a loopback server: a
// cross-site take, a navigation, a rebinding Host. Each gets 403 and the job
// stays queued; loopback names (any port) and same-machine pages pass.
func TestCrossSiteRefused(t *testing.T) {
	t.Parallel()
	s := start(t, "[server]\nport = 0\n", nil)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.base, "http://"))
	s.want(t, "PUT", "/queue/q", `{}`, 201, "")
	id := s.want(t, "POST", "/queue/q/job", `{"input":"secret"}`, 201, "*")

	for _, hdr := range []map[string]string{
		{"Origin": "http://evil.example"},
		{"Origin": "https://evil.example:" + port},
		{"Origin": "null"},
		{"Origin": "http://localhost.evil.example"},
		{"Origin": "http://127.0.0.1.nip.io:" + port},
		{"Origin": "ftp://localhost"},
		{"Origin": "http://localhost/path"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Host": "evil.example"},
		{"Host": "evil.example:" + port},
		{"Host": "localhost.evil.example:" + port},
		{"Host": "127.0.0.2:" + port},
	} {
		s.wantForbidden(t, "GET", "/queue/q/job", "", hdr, "")
		s.wantForbidden(t, "DELETE", "/queue/q", "", hdr, "")
		s.wantForbidden(t, "POST", "/queue/q/job", `{}`, hdr, "")
	}
	s.wantForbidden(t, "GET", "/queue/q/job", "", map[string]string{"Host": "evil.example"}, `Host "evil.example" is not allowed; list it in server.allowed_hosts (OCYPOD_ALLOWED_HOSTS)`)
	s.wantForbidden(t, "GET", "/queue/q/job", "", map[string]string{"Origin": "http://evil.example"}, `cross-origin request from "http://evil.example"`)
	s.wantForbidden(t, "GET", "/queue/q/job", "", map[string]string{"Origin": "null"}, "Origin: \"null\"")
	s.want(t, "GET", "/queue/q/size", "", 200, "1")
	s.want(t, "GET", "/job/"+id+"/status", "", 200, `"queued"`)
	s.want(t, "GET", "/queue", "", 200, `["q"]`)

	for _, hdr := range []map[string]string{
		{"Host": "localhost"},
		{"Host": "localhost:" + port},
		{"Host": "LocalHost:1"},
		{"Host": "127.0.0.1"},
		{"Host": "127.0.0.1:" + port},
		{"Host": "[::1]"},
		{"Host": "[::1]:" + port},
		{"Origin": "http://localhost:3000"},
		{"Origin": "https://127.0.0.1"},
		{"Origin": "http://[::1]:" + port},
		{"Sec-Fetch-Site": "same-origin"},
		{"Sec-Fetch-Site": "same-site"},
		{"Sec-Fetch-Site": "none"},
		{"Origin": "http://localhost:3000", "Sec-Fetch-Site": "cross-site"},
	} {
		if code, body, h := s.send(t, "GET", "/queue/q/size", "", hdr); code != 200 || body != "1" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET /queue/q/size with %v = %d %q %v, want 200 1", hdr, code, body, h)
		}
	}
	s.want(t, "GET", "/queue/q/job", "", 200, `{"id":`+id+`,"input":"secret"}`)
}

// TestAllowedHosts checks that server.allowed_hosts, from the file or the
// environment, replaces the loopback names: entries without a port match
// any port, entries with one only that port.
func TestAllowedHosts(t *testing.T) {
	t.Parallel()
	file := "[server]\nport = 0\nallowed_hosts = [\"Queue.Example\", \"other.example:9000\"]\n"
	for name, env := range map[string]map[string]string{
		"toml": nil,
		"env":  {"OCYPOD_ALLOWED_HOSTS": "queue.example, other.example:9000"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := file
			if env != nil {
				f = "[server]\nport = 0\nallowed_hosts = [\"overridden.example\"]\n"
			}
			s := start(t, f, env)
			for _, host := range []string{"queue.example", "queue.example:1", "QUEUE.example:8023", "other.example:9000"} {
				if code, body, _ := s.send(t, "GET", "/queue", "", map[string]string{"Host": host}); code != 200 {
					t.Errorf("Host %s: %d %q, want 200", host, code, body)
				}
			}
			for _, host := range []string{"localhost", "127.0.0.1", "other.example", "other.example:9001", "overridden.example", "www.queue.example"} {
				s.wantForbidden(t, "GET", "/queue", "", map[string]string{"Host": host}, "is not allowed")
			}
			ok := map[string]string{"Host": "queue.example"}
			for _, origin := range []string{"http://queue.example:3000", "https://other.example:9000"} {
				ok["Origin"] = origin
				if code, body, _ := s.send(t, "GET", "/queue", "", ok); code != 200 {
					t.Errorf("Origin %s: %d %q, want 200", origin, code, body)
				}
			}
			for _, origin := range []string{"http://localhost", "http://other.example", "null"} {
				ok["Origin"] = origin
				s.wantForbidden(t, "GET", "/queue", "", ok, "")
			}
		})
	}
}

// TestHostGuardBinding covers the listener-dependent rules without binding
// other addresses: a non-loopback listener without allowed_hosts checks no
// Host (and warns) but still wants Origin to match the request's Host; a
// loopback listener also accepts its own address.
func TestHostGuardBinding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		listen  string
		allowed []string
		hdr     map[string]string
		pass    bool
	}{
		{"public any host", "192.0.2.1:8023", nil, map[string]string{"Host": "evil.example"}, true},
		{"wildcard any host", "0.0.0.0:8023", nil, map[string]string{"Host": "anything:1"}, true},
		{"public same origin", "192.0.2.1:8023", nil, map[string]string{"Host": "192.0.2.1:8023", "Origin": "http://192.0.2.1:8023"}, true},
		{"public cross origin", "192.0.2.1:8023", nil, map[string]string{"Host": "192.0.2.1:8023", "Origin": "http://evil.example"}, false},
		{"public origin other port", "192.0.2.1:8023", nil, map[string]string{"Host": "192.0.2.1:8023", "Origin": "http://192.0.2.1:3000"}, false},
		{"public null origin", "192.0.2.1:8023", nil, map[string]string{"Host": "192.0.2.1:8023", "Origin": "null"}, false},
		{"public cross-site", "192.0.2.1:8023", nil, map[string]string{"Host": "192.0.2.1:8023", "Sec-Fetch-Site": "cross-site"}, false},
		{"public with list", "[2001:db8::1]:8023", []string{"queue.example"}, map[string]string{"Host": "[2001:db8::1]:8023"}, false},
		{"public with list ok", "[2001:db8::1]:8023", []string{"queue.example"}, map[string]string{"Host": "queue.example:8023"}, true},
		{"public list origin", "0.0.0.0:8023", []string{"queue.example"}, map[string]string{"Host": "queue.example", "Origin": "http://app.example"}, false},
		{"loopback own address", "127.0.0.2:8023", nil, map[string]string{"Host": "127.0.0.2:8023"}, true},
		{"loopback v6", "[::1]:8023", nil, map[string]string{"Host": "[::1]:8023"}, true},
		{"loopback other", "127.0.0.2:8023", nil, map[string]string{"Host": "127.0.0.3:8023"}, false},
		{"loopback same-machine page", "127.0.0.1:8023", nil, map[string]string{"Host": "localhost", "Origin": "http://localhost"}, true},
	}
	for _, tt := range tests {
		addr, err := net.ResolveTCPAddr("tcp", tt.listen)
		if err != nil {
			t.Fatal(err)
		}
		logs := &syncBuffer{}
		reached := false
		next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached = true })
		g := newHostGuard(config.Server{AllowedHosts: tt.allowed}, addr, next, slog.New(slog.NewTextHandler(logs, nil)))
		req := httptest.NewRequestWithContext(t.Context(), "GET", "/queue", nil)
		for k, v := range tt.hdr {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		w := httptest.NewRecorder()
		g.ServeHTTP(w, req)
		if reached != tt.pass || (w.Code == http.StatusForbidden) == tt.pass {
			t.Errorf("%s: listening on %s, allowed %q, %v: status %d, reached the API %t; want pass %t (%s)",
				tt.name, tt.listen, tt.allowed, tt.hdr, w.Code, reached, tt.pass, w.Body)
		}
		warned := strings.Contains(logs.String(), "level=WARN") && strings.Contains(logs.String(), "server.allowed_hosts (OCYPOD_ALLOWED_HOSTS) is empty")
		if wantWarn := tt.allowed == nil && !strings.HasPrefix(tt.listen, "127.") && !strings.HasPrefix(tt.listen, "[::1]"); warned != wantWarn {
			t.Errorf("%s: warning logged %t, want %t:\n%s", tt.name, warned, wantWarn, logs)
		}
	}
	// Two Origin headers are refused: browsers send one.
	g := newHostGuard(config.Server{}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, http.NotFoundHandler(), slog.New(slog.DiscardHandler))
	req := httptest.NewRequestWithContext(t.Context(), "GET", "/", nil)
	req.Host = "localhost"
	req.Header.Add("Origin", "http://localhost")
	req.Header.Add("Origin", "http://evil.example")
	w := httptest.NewRecorder()
	g.ServeHTTP(w, req)
	if w.Code != http.StatusForbidden {
		t.Errorf("two Origin headers: %d, want 403", w.Code)
	}
}

// FuzzHostGuard feeds arbitrary Host, Origin and Sec-Fetch-Site values to
// the loopback guard: it never panics, every refusal is a nosniff 403, and
// whatever passes names an allowed host in both Host and Origin.
func FuzzHostGuard(f *testing.F) {
	for _, s := range [][3]string{
		{"localhost:8023", "", ""}, {"evil.example", "", ""}, {"127.0.0.1", "http://localhost:3000", ""},
		{"[::1]:1", "null", ""}, {"localhost", "http://evil.example", ""}, {"localhost", "", "cross-site"},
		{"LOCALHOST", "HTTP://LOCALHOST", "Cross-Site"}, {"localhost", "http://user@localhost", ""},
	} {
		f.Add(s[0], s[1], s[2])
	}
	g := newHostGuard(config.Server{}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8023},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(299) }), slog.New(slog.DiscardHandler))
	loopback := func(h config.HostPort) bool {
		return h.Host == "localhost" || h.Host == "127.0.0.1" || h.Host == "::1"
	}
	f.Fuzz(func(t *testing.T, host, origin, fetchSite string) {
		req := httptest.NewRequestWithContext(t.Context(), "GET", "/", nil)
		req.Host = host
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		req.Header.Set("Sec-Fetch-Site", fetchSite)
		w := httptest.NewRecorder()
		g.ServeHTTP(w, req)
		switch w.Code {
		case http.StatusForbidden:
			if w.Header().Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(w.Body.String(), "Forbidden: ") {
				t.Fatalf("refusal without nosniff or text: %v %q", w.Header(), w.Body)
			}
		case 299:
			h, err := config.ParseHostPort(host)
			if err != nil || !loopback(h) {
				t.Fatalf("Host %q passed", host)
			}
			if origin != "" {
				o, ok := originHost(origin)
				if !ok || !loopback(o) {
					t.Fatalf("Origin %q passed", origin)
				}
			} else if strings.EqualFold(fetchSite, "cross-site") {
				t.Fatalf("Sec-Fetch-Site %q passed without Origin", fetchSite)
			}
		default:
			t.Fatalf("status %d", w.Code)
		}
	})
}

// TestForbiddenDocumented: every operation of openapi.json lists the
// guard's 403 (wantForbidden checks the answers against it: text/plain,
// "Forbidden: ").
func TestForbiddenDocumented(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../shared/httpapi/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      map[string]map[string]json.RawMessage
		Components struct {
			Responses map[string]struct {
				Content map[string]struct{ Schema map[string]any }
			}
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Components.Responses["Forbidden"].Content["text/plain; charset=utf-8"].Schema["pattern"]; got != "^Forbidden: " {
		t.Errorf("Forbidden's text/plain pattern = %v, want ^Forbidden: ", got)
	}
	ops := 0
	for path, methods := range doc.Paths {
		for method, raw := range methods {
			if method == "parameters" {
				continue
			}
			var op struct{ Responses map[string]map[string]any }
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			ops++
			if op.Responses["403"]["$ref"] != "#/components/responses/Forbidden" {
				t.Errorf("%s %s does not list the 403", method, path)
			}
		}
	}
	if ops == 0 {
		t.Fatal("no operations read")
	}
}

// TestHostGuardRemembersPassedHost checks that the Host last accepted is
// not parsed again (no allocation) and that a refused Host stays refused
// around it.
func TestHostGuardRemembersPassedHost(t *testing.T) {
	g := &hostGuard{allowed: []config.HostPort{{Host: "127.0.0.1"}, {Host: "localhost", Port: "8023"}}}
	req := func(host string) *http.Request {
		r := httptest.NewRequest("GET", "/queue", nil)
		r.Host = host
		return r
	}
	for _, c := range []struct {
		host string
		ok   bool
	}{
		{"127.0.0.1:8023", true}, {"127.0.0.2:8023", false}, {"127.0.0.1:8023", true}, {"localhost:8023", true},
		{"localhost:8024", false}, {"LOCALHOST:8023", true}, {"127.0.0.1:8023", true}, {"", false}, {"localhost:8023", true},
	} {
		if got := g.refusal(req(c.host)); (got == "") != c.ok {
			t.Errorf("Host %q: refusal %q, want allowed %v", c.host, got, c.ok)
		}
	}
	r := req("127.0.0.1:8023")
	if got := g.refusal(r); got != "" {
		t.Fatal(got)
	}
	if n := fewestAllocs(func() { _ = g.refusal(r) }); n != 0 {
		t.Errorf("%v allocations per allowed request, want 0", n)
	}
}
