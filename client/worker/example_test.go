package worker_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ocyless/ocyless/client"
	"github.com/ocyless/ocyless/client/internal/testserver"
	"github.com/ocyless/ocyless/client/worker"
)

// A worker doubling numbers: it runs until its context ends, here once
// the job is done.
func Example() {
	srv, err := testserver.Start() // an ocyless server; use your own URL
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c, err := client.New(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.PutQueue(context.Background(), "numbers", client.QueueSpec{Retries: new(uint64(2))}); err != nil {
		log.Fatal(err)
	}
	created, err := c.CreateJob(context.Background(), "numbers", client.JobSpec{Input: map[string]int{"n": 21}})
	if err != nil {
		log.Fatal(err)
	}

	ctx, stop := context.WithCancel(context.Background())
	w, err := worker.New(c, func(ctx context.Context, job *worker.Job) (any, error) {
		var in struct{ N int }
		if err := job.Decode(&in); err != nil {
			return nil, worker.Permanent(err) // bad input: retrying will not help
		}
		return map[string]int{"double": 2 * in.N}, nil
	}, worker.Options{
		Queues:      []string{"numbers"},
		Concurrency: 4,
		OnFinish:    func(*worker.Job, error) { stop() }, // one job is enough here
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Run(ctx); err != nil {
		log.Fatal(err)
	}

	out, err := c.JobOutput(context.Background(), created.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out))
	// Output: {"double":42}
}
