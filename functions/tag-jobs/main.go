// Command tag-jobs is the Lambda function (TagJobsFunction in template.yaml) serving
// the Ocypod route GET /tag/{name} behind API Gateway.
package main

import "github.com/ocyless/ocyless/shared/lambdamain"

func main() { lambdamain.HTTP("tag-jobs") }
