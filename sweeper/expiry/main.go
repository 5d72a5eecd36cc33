// Command expiry is the scheduled Lambda function SweepExpiryFunction (see
// template.yaml): EventBridge Scheduler invokes it every SweepRate, and it
// deletes ended jobs whose expires_after has passed.
package main

import (
	"github.com/ocyless/ocyless/shared/lambdamain"
	"github.com/ocyless/ocyless/shared/sweep"
)

func main() { lambdamain.Sweep(sweep.Expiry) }
