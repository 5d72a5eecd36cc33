package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/ocyless/ocyless/client"
	"github.com/ocyless/ocyless/client/internal/testserver"
)

// The whole life of a job: a queue, a job, a worker taking it, its
// heartbeat, and its completion with an output.
func Example() {
	srv, err := testserver.Start() // an ocyless server; use your own URL
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()

	c, err := client.New(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.PutQueue(ctx, "emails", client.QueueSpec{Timeout: new(10 * time.Minute), Retries: new(uint64(3))}); err != nil {
		log.Fatal(err)
	}
	created, err := c.CreateJob(ctx, "emails", client.JobSpec{Input: map[string]string{"to": "ada@example.com"}})
	if err != nil {
		log.Fatal(err)
	}

	job, err := c.TakeOne(ctx, "emails", client.TakeOptions{Worker: "mailer-1", Wait: 10 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("took job %d (attempt %d): %s\n", job.ID, job.Attempt, job.Input)
	if err := c.Heartbeat(ctx, job.ID, job.Attempt); err != nil {
		log.Fatal(err)
	}
	if err := c.Complete(ctx, job.ID, job.Attempt, map[string]bool{"sent": true}); err != nil {
		log.Fatal(err)
	}

	j, err := c.GetJob(ctx, created.ID, "status", "output")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(j.Status, string(j.Output))
	// Output:
	// took job 1 (attempt 1): {"to":"ada@example.com"}
	// completed {"sent":true}
}

// Errors carry the server's status and message; errors.Is tells them
// apart.
func ExampleError() {
	srv, err := testserver.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c, err := client.New(srv.URL)
	if err != nil {
		log.Fatal(err)
	}

	_, err = c.GetJob(context.Background(), 42)
	fmt.Println(errors.Is(err, client.ErrNotFound), client.IsConflict(err))
	var e *client.Error
	if errors.As(err, &e) {
		fmt.Println(e.StatusCode, e.Message)
	}
	// Output:
	// true false
	// 404 Job with ID 42 does not exist
}

// A create with a key is idempotent while its job is pending: sending it
// again (after a 503, say) finds the same job instead of adding one. Once
// a worker took the job, the same key queues a new one behind it.
func ExampleClient_CreateJob_key() {
	srv, err := testserver.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.New(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.PutQueue(ctx, "reports", client.QueueSpec{}); err != nil {
		log.Fatal(err)
	}
	for range 2 {
		created, err := c.CreateJob(ctx, "reports", client.JobSpec{Key: "report-2030-01", Input: "January"})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%+v\n", created)
	}
	// Output:
	// {ID:1 Existing:false}
	// {ID:1 Existing:true}
}
