package worker

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocyless/ocyless/client"
)

// TestCompletionTakeQueueGone: the queue a completion takes the next job
// from is deleted while the handler runs. The completion still counts:
// refused with nothing applied (404 for the take queue), it is reported
// again without the take; answered 404 although it was applied (as a
// server could answer when the queue went between the two), the repeat's
// 409 shows it applied. Either way the job is completed and its outcome
// is not reported lost.
func TestCompletionTakeQueueGone(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"refused before the change", "answered 404 after the change"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.queue(t, "q", client.QueueSpec{})
			id := e.create(t, "q", client.JobSpec{})
			returning, proceed := make(chan struct{}), make(chan struct{})
			onFinish, outcomes := finishes()
			w, err := New(e.c, func(context.Context, *Job) (any, error) {
				close(returning)
				<-proceed
				return "ok", nil
			}, Options{Queues: []string{"q"}, Wait: time.Second, HeartbeatInterval: -1, OnFinish: onFinish})
			if err != nil {
				t.Fatal(err)
			}
			if mode == "answered 404 after the change" {
				var once sync.Once
				e.rec.after = func(req *http.Request, resp *http.Response) *http.Response {
					if req.Method != http.MethodPatch || !strings.Contains(req.URL.RawQuery, "take=q") {
						return resp
					}
					replaced := resp
					once.Do(func() {
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						replaced = &http.Response{StatusCode: 404, Status: "404 Not Found", Header: http.Header{},
							Body: io.NopCloser(strings.NewReader("Queue 'q' does not exist")), Request: req}
					})
					return replaced
				}
			}
			start(t, w)
			await(t, returning, "handler")
			if mode == "refused before the change" {
				if err := e.c.DeleteQueue(t.Context(), "q"); err != nil {
					t.Fatal(err)
				}
			}
			close(proceed)
			if o := await(t, outcomes, "finished job"); o.err != nil {
				t.Errorf("OnFinish err = %v, want nil", o.err)
			}
			if j := e.job(t, id, "status", "output"); j.Status != client.StatusCompleted || string(j.Output) != `"ok"` {
				t.Errorf("job = %s %s, want completed \"ok\"", j.Status, j.Output)
			}
			if got := e.rec.count("PATCH /job/", "take=q", " 404"); got != 1 {
				t.Errorf("%d completions with the take answered 404, want 1", got)
			}
		})
	}
}
