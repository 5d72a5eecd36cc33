// Command health is the Lambda function (HealthFunction in template.yaml) serving
// the Ocypod route GET /health behind API Gateway.
package main

import "github.com/ocyless/ocyless/shared/lambdamain"

func main() { lambdamain.HTTP("health") }
