package httpapi

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

var updateReplay = flag.Bool("update-replay", false, "rewrite testdata/ocypod-replay.golden from the current code")

const (
	replayRequests = "testdata/ocypod-requests.txt"
	replayGolden   = "testdata/ocypod-replay.golden"
)

// replayStep is one request of the replay.
type replayStep struct {
	env     bool // start over on a fresh namespace
	limit   int64
	advance time.Duration
	r       *http.Request
	label   string // how the golden file names the request
}

// readReplay reads the request file, then appends the bad inputs (with
// their own body limit).
func readReplay(tb testing.TB) []replayStep {
	tb.Helper()
	f, err := os.Open(replayRequests)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var steps []replayStep
	var pending replayStep
	ct := "application/json"
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case strings.HasPrefix(line, "@env"):
			pending.env = true
			pending.limit = 0
			if arg := strings.TrimSpace(strings.TrimPrefix(line, "@env")); arg != "" {
				if pending.limit, err = strconv.ParseInt(arg, 10, 64); err != nil {
					tb.Fatalf("%s:%d: %v", replayRequests, n, err)
				}
			}
			continue
		case strings.HasPrefix(line, "@clock "):
			d, err := time.ParseDuration(strings.TrimPrefix(line, "@clock "))
			if err != nil {
				tb.Fatalf("%s:%d: %v", replayRequests, n, err)
			}
			pending.advance += d
			continue
		case strings.HasPrefix(line, "@ct "):
			ct = strings.TrimPrefix(line, "@ct ")
			continue
		}
		method, rest, _ := strings.Cut(line, " ")
		path, body, _ := strings.Cut(rest, " ")
		r := newRequest(method, path, body)
		switch ct {
		case "-":
			r.Header.Del("Content-Type")
		default:
			if body != "" {
				r.Header.Set("Content-Type", ct)
			}
		}
		ct = "application/json"
		pending.r, pending.label = r, line
		steps = append(steps, pending)
		pending = replayStep{}
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	for i, tt := range badInputs() {
		s := replayStep{r: tt.request("1"), label: "bad input: " + tt.name}
		if i == 0 {
			s.env, s.limit = true, badInputLimit
		}
		steps = append(steps, s)
	}
	return steps
}

// replayRecord runs the steps and writes each answer: status, the headers
// a client reads, and the body.
func replayRecord(t *testing.T, steps []replayStep) [][]byte {
	var env *testEnv
	out := make([][]byte, len(steps))
	for i, s := range steps {
		if s.env {
			env = newEnv(t, Options{MaxBodySize: s.limit})
			if env.snapshot(t) == nil {
				t.Fatal("snapshot failed")
			}
			// Start every section with the seeds the bad inputs expect.
			if s.limit == badInputLimit {
				env.seedQueue(t, "q", `{"retries":1}`)
				env.seedJob(t, "q", `{"input":{"k":"v"},"tags":["t"]}`)
				env.seedJob(t, "q", `{}`)
				env.take(t, "q")
			}
		}
		env.clock.Advance(s.advance)
		w := serve(env.h, s.r)
		var b bytes.Buffer
		fmt.Fprintf(&b, "%s\n=> %d\n", s.label, w.Code)
		for _, h := range []string{"Allow", "Content-Type", "Location"} {
			if v := w.Header().Get(h); v != "" {
				fmt.Fprintf(&b, "%s: %s\n", h, v)
			}
		}
		fmt.Fprintf(&b, "%q\n\n", w.Body.String())
		out[i] = b.Bytes()
	}
	return out
}

// replayChanged are the answers that differ from Ocypod 0.8's on purpose
// (README, "Differences from upstream"), by request label: the new routes
// now answer paths that were unknown, ?fields= names each field once, and
// a job holds at most 64 tags.
var replayChanged = map[string]string{
	"POST /queue/q/job " + sixtyFiveTags: "=> 400\nContent-Type: text/plain; charset=utf-8\n" + `"Invalid tags: at most 64 tags per job"`,
	"GET /job/1?fields=id,id":            "=> 200\nContent-Type: application/json\n" + `"{\"id\":1}"`,
	"GET /job/1?fields=status,status,ended": "=> 200\nContent-Type: application/json\n" +
		`"{\"status\":\"queued\",\"ended\":false}"`,
	"GET /job":  "=> 400\nContent-Type: text/plain; charset=utf-8\n" + `"Invalid queues: give at least one queue"`,
	"POST /job": "=> 405\nAllow: GET\n" + `""`,
	"GET /jobs?fields=id,status": "=> 200\nContent-Type: application/json\n" +
		`"{\"jobs\":[{\"id\":1,\"status\":\"queued\"}],\"next_cursor\":null}"`,
	"GET /queue/q/jobs?fields=id,status": "=> 200\nContent-Type: application/json\n" +
		`"{\"jobs\":[{\"id\":1,\"status\":\"queued\"}],\"next_cursor\":null}"`,
	"POST /queue/q/jobs {}":      "=> 400\nContent-Type: text/plain; charset=utf-8\n" + `"Invalid jobs: expected an array of 1 to 1000 job bodies"`,
	"PATCH /queue/q {}":          "=> 204\n" + `""`,
	"PATCH /queue/bad%20name {}": "=> 400\nContent-Type: text/plain; charset=utf-8\n" + `"Invalid queue name, valid characters: a-zA-Z0-9_.-"`,
	"POST /queue/q":              "=> 405\nAllow: GET, PUT, DELETE, PATCH\n" + `""`,
	"GET /workers":               "=> 200\nContent-Type: application/json\n" + `"[]"`,
	"GET /failures":              "=> 200\nContent-Type: application/json\n" + `"{}"`,
}

// sixtyFiveTags is a create body with one tag more than a job may hold.
var sixtyFiveTags = func() string {
	tags := make([]string, 65)
	for i := range tags {
		tags[i] = fmt.Sprintf("%q", fmt.Sprintf("t%d", i))
	}
	return `{"tags":[` + strings.Join(tags, ",") + `]}`
}()

// TestOcypodReplay replays Ocypod's quickstart and the Ocypod request set
// (testdata/ocypod-requests.txt, then the bad inputs) and checks every
// answer byte for byte against the answers recorded before the extended
// job model (testdata/ocypod-replay.golden): a client that uses no
// extension sees no change, except the few answers replayChanged lists.
func TestOcypodReplay(t *testing.T) {
	t.Parallel()
	steps := readReplay(t)
	got := replayRecord(t, steps)
	if *updateReplay {
		if err := os.WriteFile(replayGolden, bytes.Join(got, nil), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	golden, err := os.ReadFile(replayGolden)
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.SplitAfter(golden, []byte("\n\n"))
	if n := len(want) - 1; n != len(steps) { // the last piece is empty
		t.Fatalf("%s has %d answers, %s %d requests", replayGolden, n, replayRequests, len(steps))
	}
	changed := map[string]bool{}
	for i, s := range steps {
		if w, ok := replayChanged[s.label]; ok {
			changed[s.label] = true
			if g := strings.TrimSuffix(strings.TrimPrefix(string(got[i]), s.label+"\n"), "\n\n"); g != w {
				t.Errorf("%s (changed on purpose):\n got %s\nwant %s", s.label, g, w)
			}
			continue
		}
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("answer changed:\n got %s\nwant %s", got[i], want[i])
		}
	}
	for label := range replayChanged {
		if !changed[label] {
			t.Errorf("replayChanged lists %q, which the replay does not send", label)
		}
	}
}
