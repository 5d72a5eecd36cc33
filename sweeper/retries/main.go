// Command retries is the scheduled Lambda function SweepRetriesFunction (see
// template.yaml): EventBridge Scheduler invokes it every SweepRate, and it
// requeues failed and timed-out jobs whose retry delay has passed.
package main

import (
	"github.com/ocyless/ocyless/shared/lambdamain"
	"github.com/ocyless/ocyless/shared/sweep"
)

func main() { lambdamain.Sweep(sweep.Retries) }
