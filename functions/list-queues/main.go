// Command list-queues is the Lambda function (ListQueuesFunction in template.yaml) serving
// the Ocypod route GET /queue behind API Gateway.
package main

import "github.com/ocyless/ocyless/shared/lambdamain"

func main() { lambdamain.HTTP("list-queues") }
