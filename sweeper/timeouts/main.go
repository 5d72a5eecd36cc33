// Command timeouts is the scheduled Lambda function SweepTimeoutsFunction (see
// template.yaml): EventBridge Scheduler invokes it every SweepRate, and it
// fails, as timed_out, running jobs past their timeout or heartbeat_timeout.
package main

import (
	"github.com/ocyless/ocyless/shared/lambdamain"
	"github.com/ocyless/ocyless/shared/sweep"
)

func main() { lambdamain.Sweep(sweep.Timeouts) }
