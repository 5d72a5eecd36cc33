// Package worker runs a handler on the jobs of one or more ocyless
// queues: it long-polls for jobs, runs up to Concurrency handlers at once,
// sends each job's heartbeats, completes the job with the handler's output
// or fails it with the handler's error, and shuts down gracefully.
//
//	w, err := worker.New(c, func(ctx context.Context, job *worker.Job) (any, error) {
//		var in struct{ N int }
//		if err := job.Decode(&in); err != nil {
//			return nil, worker.Permanent(err) // bad input: retrying will not help
//		}
//		return map[string]int{"double": 2 * in.N}, nil
//	}, worker.Options{Queues: []string{"numbers"}, Concurrency: 4})
//	err = w.Run(ctx) // until ctx ends
//
// # Taking jobs
//
// One long poll (GET /queue/{name}/job, or GET /job?queues= for several
// queues, with wait and count) takes as many jobs as there are free
// handler slots. A handler's completion takes the next job of the same
// lane in the same request (PATCH /job/{id}?take=<queue>): two requests
// per job instead of three. With several ordered queues it takes from the
// first one, as the long poll would; with round-robin queues a completion
// takes nothing and the lane goes back to the long poll.
//
// # Heartbeats and fencing
//
// Every take names the worker, so the server answers the job's attempt
// number, and every heartbeat, output write and report carries it
// (?attempt=n). When a job timed out and was taken again, the server
// refuses the old attempt's calls with 409 "Job <id> attempt <n> is not
// current" and changes nothing: a slow worker can never complete, fail or
// overwrite the newer attempt. A heartbeat refused this way (or because
// the job was cancelled, timed out or deleted) ends the handler's context
// with cause ErrJobLost, and the handler's result is dropped.
//
// Heartbeats go every third of the job's heartbeat_timeout, or every
// Options.HeartbeatInterval. The heartbeat_timeout is read (GET
// /job/{id}?fields=heartbeat_timeout) once the handler has run 250ms: a
// shorter job costs only its take and its completion.
//
// # Failures
//
// A handler error fails the job: it is retried by its policy while retries
// are left, then fails for good in the failure group WithGroup named. The
// error's text is kept in the job's history (at most 64 KiB). Permanent
// fails it for good at once; RetryAt and RetryIn set this retry's time. A
// panic is recovered and fails the job in group PanicGroup, with the stack
// in the message.
//
// # Shutdown
//
// When Run's context ends, the worker stops taking jobs at once (a long
// poll in flight is cut short: a job it was being handed in that very
// moment stays running until its timeout and is then retried, as a
// crashed worker's would be). Running handlers keep their contexts and
// may finish and report within ShutdownGrace. Then the jobs still running
// are released: failed with an error in group ShutdownGroup and a retry
// due at once, so another worker takes them while they have retries left
// (a release counts against retries, as a timeout would; a job with none
// left fails for good). Their handlers' contexts end with cause
// ErrShutdown.
package worker
