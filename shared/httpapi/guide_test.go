package httpapi

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// The guide's examples are transcripts: a ```console block holds
// "$ curl …" lines, each followed by what curl prints. TestGuide runs every
// one against the real route table and store, in order, and compares.
// Each "## " section starts on an empty store with the clock at
// guideStart; an HTML comment "<!-- guide: clock +90s -->" moves the clock
// forward and runs every sweep, as the server's tickers would.
//
//	go test ./shared/httpapi -run TestGuide -update-guide
//
// rewrites the answers in docs/guide.md from a run (review the diff).
var updateGuide = flag.Bool("update-guide", false, "rewrite docs/guide.md's answers from this run")

const guidePath = "../../docs/guide.md"

var guideStart = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// guideEnv is one section's server: a fresh namespace and clock.
type guideEnv struct {
	h     http.Handler
	clock *redistest.Clock
	store *redisstore.Store
}

func newGuideEnv(t *testing.T) *guideEnv {
	t.Helper()
	clock := redistest.NewClock(guideStart)
	store, err := redisstore.New(redistest.Shared(t).Client(), redisstore.Options{Namespace: redistest.Namespace(t), Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return &guideEnv{h: New(store, Options{Now: clock.Now}).Handler(), clock: clock, store: store}
}

// advance moves the clock and runs every sweep until none finds work.
func (e *guideEnv) advance(t *testing.T, d time.Duration) {
	t.Helper()
	e.clock.Advance(d)
	for range 100 {
		moved := 0
		for _, sweep := range []func() (redisstore.SweepResult, error){
			func() (redisstore.SweepResult, error) { return e.store.SweepOutbox(t.Context()) },
			func() (redisstore.SweepResult, error) { return e.store.SweepSchedules(t.Context()) },
			func() (redisstore.SweepResult, error) { return e.store.SweepTimeouts(t.Context()) },
			func() (redisstore.SweepResult, error) { return e.store.SweepRetries(t.Context()) },
			func() (redisstore.SweepResult, error) { return e.store.SweepExpiry(t.Context()) },
		} {
			r, err := sweep()
			if err != nil {
				t.Fatalf("sweep: %v", err)
			}
			moved += len(r.TimedOut) + len(r.Retried) + len(r.Promoted) + len(r.Abandoned) + len(r.Expired) + r.Other
		}
		if moved == 0 {
			return
		}
	}
	t.Fatal("the sweeps never settle")
}

// curl runs one command line and returns what curl would print.
func (e *guideEnv) curl(t *testing.T, line string) string {
	t.Helper()
	args, err := shellWords(line)
	if err != nil || len(args) == 0 || args[0] != "curl" {
		t.Fatalf("guide: %q: not a curl command line (%v)", line, err)
	}
	var (
		method, target, body string
		include, hasBody     bool
		header               = http.Header{}
	)
	for i := 1; i < len(args); i++ {
		a := args[i]
		next := func() string {
			if i+1 >= len(args) {
				t.Fatalf("guide: %q: %s needs a value", line, a)
			}
			i++
			return args[i]
		}
		switch {
		case a == "-s":
		case a == "-i" || a == "-si" || a == "-is":
			include = true
		case a == "-X":
			method = next()
		case strings.HasPrefix(a, "-X"):
			method = a[2:]
		case a == "--json":
			body, hasBody = next(), true
			header.Set("Content-Type", "application/json")
			header.Set("Accept", "application/json")
		case a == "-d":
			body, hasBody = next(), true
			header.Set("Content-Type", "application/x-www-form-urlencoded")
		case a == "-H":
			k, v, ok := strings.Cut(next(), ":")
			if !ok {
				t.Fatalf("guide: %q: bad header", line)
			}
			header.Set(k, strings.TrimSpace(v))
		case strings.HasPrefix(a, "-"):
			t.Fatalf("guide: %q: the harness does not know curl's %s", line, a)
		default:
			target = a
		}
	}
	u, err := url.Parse("http://" + strings.TrimPrefix(target, "http://"))
	if err != nil || u.Host != "localhost:8023" {
		t.Fatalf("guide: %q: the URL must be localhost:8023/… (%v)", line, err)
	}
	if method == "" {
		method = http.MethodGet
		if hasBody {
			method = http.MethodPost
		}
	}
	var r io.Reader
	if hasBody {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequestWithContext(t.Context(), method, u.RequestURI(), r)
	req.Header = header
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, req)
	var out bytes.Buffer
	if include {
		fmt.Fprintf(&out, "HTTP/1.1 %d %s\n", w.Code, http.StatusText(w.Code))
		for _, k := range []string{"Location", "Retry-After", EmptyReasonHeader} {
			if v := w.Header().Get(k); v != "" {
				fmt.Fprintf(&out, "%s: %s\n", k, v)
			}
		}
		if w.Body.Len() > 0 {
			out.WriteString("\n")
		}
	}
	out.Write(w.Body.Bytes())
	return strings.TrimRight(out.String(), "\n")
}

// shellWords splits a command line as sh does for the quoting the guide
// uses: single quotes, double quotes (with \" and \\), backslashes.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated '")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\' || s[i+1] == '$') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf(`unterminated "`)
			}
			in = true
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] != '\n' {
				cur.WriteByte(s[i])
				in = true
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// cursorSignature is the signature of a listing cursor: made with a key
// each namespace draws at random, it differs from run to run.
var cursorSignature = regexp.MustCompile(`("next_cursor":"[A-Za-z0-9_-]+\.)[A-Za-z0-9_-]+"`)

func unsigned(s string) string { return cursorSignature.ReplaceAllString(s, `${1}<signature>"`) }

var guideClock = regexp.MustCompile(`^<!-- guide: clock \+(\S+) -->$`)

// TestGuide runs docs/guide.md.
func TestGuide(t *testing.T) {
	data, err := os.ReadFile(guidePath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var out []string
	var env *guideEnv
	section := "(top)"
	commands := 0
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		out = append(out, l)
		switch {
		case strings.HasPrefix(l, "## "):
			section, env = l, nil
		case guideClock.MatchString(l):
			d, err := ocypod.ParseDuration(guideClock.FindStringSubmatch(l)[1])
			if err != nil {
				t.Fatalf("guide.md:%d: %v", i+1, err)
			}
			if env == nil {
				env = newGuideEnv(t)
			}
			env.advance(t, d.Std())
		case l == "```console":
			if env == nil {
				env = newGuideEnv(t)
			}
			for i++; i < len(lines) && lines[i] != "```"; {
				cmd := lines[i]
				if !strings.HasPrefix(cmd, "$ ") {
					t.Fatalf("guide.md:%d: a console block line that is no command's answer: %q", i+1, cmd)
				}
				out = append(out, cmd)
				start := i + 1
				for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
					i++
					out = append(out, lines[i])
					cmd = cmd[:len(cmd)-1] + "\n" + lines[i]
					start = i + 1
				}
				end := start
				for end < len(lines) && lines[end] != "```" && !strings.HasPrefix(lines[end], "$ ") {
					end++
				}
				want := strings.TrimRight(strings.Join(lines[start:end], "\n"), "\n")
				got := env.curl(t, strings.TrimPrefix(cmd, "$ "))
				commands++
				if unsigned(got) != unsigned(want) && !*updateGuide {
					t.Errorf("guide.md:%d (%s)\n$ %s\ngot:\n%s\nguide says:\n%s", start, section, strings.TrimPrefix(cmd, "$ "), got, want)
				}
				if got != "" {
					out = append(out, strings.Split(got, "\n")...)
				}
				i = end
			}
			if i < len(lines) {
				out = append(out, lines[i])
			}
		}
	}
	if commands < 10 {
		t.Fatalf("guide.md has %d commands: the parser found no examples", commands)
	}
	if *updateGuide {
		if err := os.WriteFile(guidePath, []byte(strings.Join(out, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
