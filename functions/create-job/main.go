// Command create-job is the Lambda function (CreateJobFunction in template.yaml) serving
// the Ocypod route POST /queue/{name}/job behind API Gateway.
package main

import "github.com/ocyless/ocyless/shared/lambdamain"

func main() { lambdamain.HTTP("create-job") }
