// Command queue-job-ids is the Lambda function (QueueJobIdsFunction in template.yaml) serving
// the Ocypod route GET /queue/{name}/job_ids behind API Gateway.
package main

import "github.com/ocyless/ocyless/shared/lambdamain"

func main() { lambdamain.HTTP("queue-job-ids") }
