package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/shared/push"
)

// TestPushDelivery: a queue made a push queue through the API gets its
// jobs delivered by the server itself, signed with the secret answered
// once on the PUT; the answer is the job's output; takes answer 409; a
// delivery in flight when the server stops is finished and recorded.
func TestPushDelivery(t *testing.T) {
	t.Parallel()
	for name, env := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var secret string
			arrived := make(chan []byte, 10)
			release := make(chan struct{})
			target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				key := secret
				mu.Unlock()
				if err := push.Verify([]byte(key), r.Header.Get(push.SignatureHeader), body, time.Now(), time.Minute); err != nil {
					t.Errorf("signature: %v", err)
				}
				arrived <- body
				if strings.Contains(string(body), `"input":"slow"`) {
					<-release
				}
				_, _ = io.WriteString(w, `{"echo":true}`)
			}))
			defer target.Close()
			s := start(t, e2eFile, env)
			req, _ := http.NewRequest("PUT", s.base+"/queue/hooks", strings.NewReader(`{"push":{"url":"`+target.URL+`/run"}}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			mu.Lock()
			secret = resp.Header.Get("Ocyless-Push-Secret")
			mu.Unlock()
			if resp.StatusCode != http.StatusCreated || len(secret) != 43 {
				t.Fatalf("PUT push queue = %d, secret header %q", resp.StatusCode, secret)
			}
			s.want(t, "GET", "/queue/hooks/job", "", 409, "Queue 'hooks' delivers its jobs by push")
			if got := s.want(t, "GET", "/queue/hooks", "", 200, "*"); strings.Contains(got, secret) || !strings.Contains(got, `"secret":"set"`) {
				t.Errorf("GET /queue/hooks = %s", got)
			}

			_, id := s.do(t, "POST", "/queue/hooks/job", `{"input":"fast"}`)
			select {
			case <-arrived:
			case <-time.After(15 * time.Second):
				t.Fatalf("the job was not delivered\n%s", s.logs)
			}
			_, got := s.do(t, "GET", "/job/"+id+"?wait=15s&fields=status,output,worker", "")
			var j struct {
				Status string          `json:"status"`
				Output json.RawMessage `json:"output"`
				Worker string          `json:"worker"`
			}
			_ = json.Unmarshal([]byte(got), &j)
			if j.Status != "completed" || string(j.Output) != `{"echo":true}` || j.Worker != "push" {
				t.Fatalf("job = %s", got)
			}

			// A delivery in flight when the server stops is finished and
			// recorded within shutdown_timeout.
			_, slow := s.do(t, "POST", "/queue/hooks/job", `{"input":"slow"}`)
			select {
			case <-arrived:
			case <-time.After(15 * time.Second):
				t.Fatalf("the slow job was not delivered\n%s", s.logs)
			}
			stopped := make(chan error, 1)
			go func() { stopped <- s.stop(t) }()
			close(release)
			if err := <-stopped; err != nil {
				t.Fatalf("stop = %v", err)
			}
			logs := s.logs.String()
			if !strings.Contains(logs, `msg="job completed" job_id=`+slow+" ") {
				t.Errorf("the delivery in flight at shutdown was not recorded (job %s)\n%s", slow, logs)
			}
			if secret != "" && strings.Contains(logs, secret) {
				t.Error("a log line shows the push secret")
			}
		})
	}
}
