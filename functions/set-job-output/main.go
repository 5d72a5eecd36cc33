// Command set-job-output is the Lambda function (SetJobOutputFunction in template.yaml) serving
// the Ocypod route PUT /job/{id}/output behind API Gateway.
package main

import "github.com/ocyless/ocyless/shared/lambdamain"

func main() { lambdamain.HTTP("set-job-output") }
