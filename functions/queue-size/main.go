// Command queue-size is the Lambda function (QueueSizeFunction in template.yaml) serving
// the Ocypod route GET /queue/{name}/size behind API Gateway.
package main

import "github.com/ocyless/ocyless/shared/lambdamain"

func main() { lambdamain.HTTP("queue-size") }
