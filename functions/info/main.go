// Command info is the Lambda function (InfoFunction in template.yaml) serving
// the Ocypod route GET /info behind API Gateway.
package main

import "github.com/ocyless/ocyless/shared/lambdamain"

func main() { lambdamain.HTTP("info") }
