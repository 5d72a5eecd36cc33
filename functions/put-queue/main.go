// Command put-queue is the Lambda function (PutQueueFunction in template.yaml) serving
// the Ocypod route PUT /queue/{name} behind API Gateway.
package main

import "github.com/ocyless/ocyless/shared/lambdamain"

func main() { lambdamain.HTTP("put-queue") }
