// Command lambda-worker is a push worker that is a Lambda function: the
// push dispatcher invokes it with a job ({"id","attempt","queue","input"})
// and records its answer as the job's output; an error fails the attempt
// (push_function_error) and the queue's retry policy applies. docs/push.md
// shows how to deploy it next to the stack. It is built by `go build ./...`
// so that it keeps compiling.
package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-lambda-go/lambda"
)

// Job is what the dispatcher sends (batch 1; with a batch it is an array).
type Job struct {
	ID      uint64 `json:"id"`
	Attempt int    `json:"attempt"`
	Queue   string `json:"queue"`
	Input   struct {
		Image string `json:"image"`
		Width int    `json:"width"`
	} `json:"input"`
}

// Output becomes the job's output.
type Output struct {
	Thumbnail string `json:"thumbnail"`
}

func handle(ctx context.Context, j Job) (Output, error) {
	if j.Input.Image == "" {
		return Output{}, errors.New("no image given")
	}
	// ... the real work ...
	return Output{Thumbnail: fmt.Sprintf("%s@%dw", j.Input.Image, j.Input.Width)}, nil
}

func main() { lambda.Start(handle) }
