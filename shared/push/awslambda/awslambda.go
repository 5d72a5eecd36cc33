// Package awslambda invokes Lambda functions for the push engine with the
// AWS SDK: Client is a push.LambdaInvoker. It is a package of its own so
// that only the processes that deliver to Lambda targets link the SDK's
// Lambda client; package push, which every HTTP function imports for the
// push settings and the target policy, links no AWS SDK.
package awslambda

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/smithy-go"

	"github.com/ocyless/ocyless/shared/push"
)

// API is the part of *lambda.Client a Client uses.
type API interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, optFns ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// Client is a push.LambdaInvoker on an SDK Lambda client.
type Client struct {
	api API
}

var _ push.LambdaInvoker = (*Client)(nil)

// New makes the Lambda client of the engine from cfg (see NewSDKClient).
func New(cfg aws.Config, baseEndpoint string) *Client {
	return Wrap(NewSDKClient(cfg, baseEndpoint))
}

// Wrap makes a Client on api.
func Wrap(api API) *Client { return &Client{api: api} }

// NewSDKClient makes an SDK Lambda client from cfg: the SDK never retries
// an Invoke by itself (a retried invocation would run the jobs twice; the
// queue's retry policy decides), and baseEndpoint, when not empty,
// replaces the service endpoint (a VPC endpoint, or an emulator in
// tests).
func NewSDKClient(cfg aws.Config, baseEndpoint string) *lambda.Client {
	return lambda.NewFromConfig(cfg, func(o *lambda.Options) {
		o.Retryer = aws.NopRetryer{}
		if baseEndpoint != "" {
			o.BaseEndpoint = aws.String(baseEndpoint)
		}
	})
}

// InvokeLambda invokes function synchronously (RequestResponse) with
// payload as its event. An error status of the Invoke call is a
// *push.LambdaAPIError (with the throttling's retryAfterSeconds, or the
// Retry-After header); any other error is the SDK's, whose chain holds the
// transport's (a context deadline, a net.Error).
func (c *Client) InvokeLambda(ctx context.Context, function string, payload []byte) (push.LambdaAnswer, error) {
	out, err := c.api.Invoke(ctx, &lambda.InvokeInput{
		FunctionName:   aws.String(function),
		InvocationType: types.InvocationTypeRequestResponse,
		Payload:        payload,
	})
	if err != nil {
		return push.LambdaAnswer{}, apiError(err)
	}
	return push.LambdaAnswer{Status: int(out.StatusCode), FunctionError: aws.ToString(out.FunctionError), Payload: out.Payload}, nil
}

// apiError is err as a *push.LambdaAPIError when the Lambda API answered
// it with an HTTP status, else err itself.
func apiError(err error) error {
	var re *awshttp.ResponseError
	if !errors.As(err, &re) || re.HTTPStatusCode() == 0 {
		return err
	}
	e := &push.LambdaAPIError{Status: re.HTTPStatusCode(), Err: err}
	var api smithy.APIError
	if errors.As(err, &api) {
		e.Code, e.Message = api.ErrorCode(), api.ErrorMessage()
	}
	var tooMany *types.TooManyRequestsException
	if errors.As(err, &tooMany) && tooMany.RetryAfterSeconds != nil {
		e.RetryAfter = *tooMany.RetryAfterSeconds
	} else if re.Response != nil {
		e.RetryAfter = re.Response.Header.Get("Retry-After")
	}
	return e
}
