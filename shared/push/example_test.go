package push_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/push"
)

// printReporter stands for the store: it records each job's outcome.
type printReporter struct{}

func (printReporter) Report(_ context.Context, outs []push.Outcome) error {
	for _, o := range outs {
		fmt.Printf("job %d attempt %d: %s output=%s\n", o.JobID, o.Attempt, o.Result, o.Output)
	}
	return nil
}

// The store's side of push delivery: decode the queue's setting when it is
// written, then hand due jobs to the engine and record what it reports.
func Example() {
	secret := []byte("0123456789abcdef0123")
	worker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if push.Verify(secret, r.Header.Get(push.SignatureHeader), body, time.Now(), 0) != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"thumbnail": "cat-small.png"}`)
	}))
	defer worker.Close()

	policy, err := push.NewPolicy(nil, push.Local) // [push] allowed_hosts unset: loopback only
	if err != nil {
		panic(err)
	}
	target, err := push.DecodeTarget([]byte(`{"url": "`+worker.URL+`/thumbnail", "secret": "`+string(secret)+`"}`), policy)
	if err != nil {
		fmt.Println(err) // an *ocypod.Error: 400 "Invalid push: ..."
		return
	}
	d := push.New(push.Options{Policy: policy, Logger: slog.New(slog.DiscardHandler)})
	engine := push.NewEngine(d, printReporter{})
	err = engine.Start(context.Background(), push.Delivery{
		Target:  target,
		Jobs:    []push.Job{{ID: 7, Attempt: 1, Queue: "thumbnails", Input: []byte(`{"image": "cat.png"}`)}},
		Timeout: target.EffectiveTimeout(ocypod.Seconds(300)), // the queue's timeout
	})
	if err != nil {
		panic(err) // ErrBusy or ErrInFlight: take nothing more now
	}
	engine.Wait()
	// Output:
	// job 7 attempt 1: completed output={"thumbnail": "cat-small.png"}
}
