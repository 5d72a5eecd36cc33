// Command get-job-output is the Lambda function (GetJobOutputFunction in template.yaml) serving
// the Ocypod route GET /job/{id}/output behind API Gateway.
package main

import "github.com/ocyless/ocyless/shared/lambdamain"

func main() { lambdamain.HTTP("get-job-output") }
