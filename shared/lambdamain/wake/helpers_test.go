package wake_test

import (
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/ocyless/ocyless/shared/lambdamain/wake"
)

func newClient(cfg aws.Config, endpoint string) wake.Invoker {
	return wake.NewClient(cfg, endpoint)
}
