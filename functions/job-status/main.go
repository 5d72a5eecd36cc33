// Command job-status is the Lambda function (JobStatusFunction in template.yaml) serving
// the Ocypod route GET /job/{id}/status behind API Gateway.
package main

import "github.com/ocyless/ocyless/shared/lambdamain"

func main() { lambdamain.HTTP("job-status") }
