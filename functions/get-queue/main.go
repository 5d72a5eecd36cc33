// Command get-queue is the Lambda function (GetQueueFunction in template.yaml) serving
// the Ocypod route GET /queue/{name} behind API Gateway.
package main

import "github.com/ocyless/ocyless/shared/lambdamain"

func main() { lambdamain.HTTP("get-queue") }
