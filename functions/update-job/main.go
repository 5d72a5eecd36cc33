// Command update-job is the Lambda function (UpdateJobFunction in template.yaml) serving
// the Ocypod route PATCH /job/{id} behind API Gateway.
package main

import "github.com/ocyless/ocyless/shared/lambdamain"

func main() { lambdamain.HTTP("update-job") }
