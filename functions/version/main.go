// Command version is the Lambda function (VersionFunction in template.yaml) serving
// the Ocypod route GET /info/version behind API Gateway.
package main

import "github.com/ocyless/ocyless/shared/lambdamain"

func main() { lambdamain.HTTP("version") }
