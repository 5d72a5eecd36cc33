// Command delete-queue is the Lambda function (DeleteQueueFunction in template.yaml) serving
// the Ocypod route DELETE /queue/{name} behind API Gateway.
package main

import "github.com/ocyless/ocyless/shared/lambdamain"

func main() { lambdamain.HTTP("delete-queue") }
