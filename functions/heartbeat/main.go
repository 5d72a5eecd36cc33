// Command heartbeat is the Lambda function (HeartbeatFunction in template.yaml) serving
// the Ocypod route PUT /job/{id}/heartbeat behind API Gateway.
package main

import "github.com/ocyless/ocyless/shared/lambdamain"

func main() { lambdamain.HTTP("heartbeat") }
