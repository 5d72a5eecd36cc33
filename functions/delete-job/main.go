// Command delete-job is the Lambda function (DeleteJobFunction in template.yaml) serving
// the Ocypod route DELETE /job/{id} behind API Gateway.
package main

import "github.com/ocyless/ocyless/shared/lambdamain"

func main() { lambdamain.HTTP("delete-job") }
