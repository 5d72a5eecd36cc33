// Command next-job is the Lambda function (NextJobFunction in template.yaml) serving
// the Ocypod route GET /queue/{name}/job behind API Gateway.
package main

import "github.com/ocyless/ocyless/shared/lambdamain"

func main() { lambdamain.HTTP("next-job") }
