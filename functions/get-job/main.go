// Command get-job is the Lambda function (GetJobFunction in template.yaml) serving
// the Ocypod route GET /job/{id} behind API Gateway.
package main

import "github.com/ocyless/ocyless/shared/lambdamain"

func main() { lambdamain.HTTP("get-job") }
