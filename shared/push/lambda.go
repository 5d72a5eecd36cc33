package push

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// LambdaInvoker invokes Lambda functions for the engine: one synchronous
// (RequestResponse) invocation of function (a name or ARN) with payload as
// its event. It must not retry an invocation by itself (a retried
// invocation would run the jobs twice; the queue's retry policy decides).
//
// Package awslambda implements it with the AWS SDK. This package links no
// AWS SDK, so that the HTTP functions, which decode push settings and
// judge targets with it, do not link the Lambda client either.
type LambdaInvoker interface {
	InvokeLambda(ctx context.Context, function string, payload []byte) (LambdaAnswer, error)
}

// LambdaAnswer is an Invoke call the Lambda API answered with success:
// the function ran, and either returned Payload or failed with it.
type LambdaAnswer struct {
	// Status is the Invoke call's HTTP status (200 for a synchronous
	// invocation); 0 is taken as 200.
	Status int
	// FunctionError is the X-Amz-Function-Error header ("Unhandled",
	// "Handled"): not empty when the function failed, Payload then being
	// its error document.
	FunctionError string
	// Payload is the function's answer.
	Payload []byte
}

// LambdaAPIError is an Invoke call the Lambda API refused with an HTTP
// error status (throttled, no such function, no permission, a service
// fault): the function did not run. An InvokeLambda error that is not a
// *LambdaAPIError (in its chain) is a transport error: a context deadline
// or a net.Error timeout is a timeout, anything else leaves the target
// unreachable.
type LambdaAPIError struct {
	Status  int    // the Invoke call's HTTP status
	Code    string // the API's error code (TooManyRequestsException), if known
	Message string // the API's error message, if any
	// RetryAfter is how long the API asked to wait, in Retry-After's form
	// (delta-seconds or an HTTP-date); empty for none.
	RetryAfter string
	// Err is the underlying error, if any.
	Err error
}

func (e *LambdaAPIError) Error() string {
	msg := fmt.Sprintf("Lambda Invoke: HTTP %d", e.Status)
	if e.Code != "" {
		msg = "Lambda Invoke: " + e.Code
		if e.Message != "" {
			msg += ": " + e.Message
		}
	}
	return msg
}

func (e *LambdaAPIError) Unwrap() error { return e.Err }

// invoke runs a Lambda target synchronously (RequestResponse) with the
// delivery body as its event. A function error fails every job of the
// delivery with push_function_error and the function's message; an API
// error with push_http_<status> of the Invoke call; anything that keeps
// the call from being answered with push_unreachable or push_timeout.
func (d *Deliverer) invoke(ctx, parent context.Context, t *Target, jobs []Job, body []byte, timeout time.Duration) answer {
	if d.lambda == nil {
		return failAll(GroupUnreachable, "no Lambda client is configured")
	}
	out, err := d.lambda.InvokeLambda(ctx, t.Lambda, body)
	if err != nil {
		return d.lambdaFailure(ctx, parent, err, timeout)
	}
	status := out.Status
	if status == 0 {
		status = 200
	}
	if int64(len(out.Payload)) > d.maxAnswer {
		a := failAll(GroupHTTP(status), fmt.Sprintf("function answer larger than %d bytes", d.maxAnswer))
		a.status = status
		return a
	}
	if out.FunctionError != "" {
		a := failAll(GroupFunctionError, functionErrorMessage(out.FunctionError, out.Payload))
		a.status = status
		return a
	}
	// A function's answer is always JSON; classify it as a JSON 2xx.
	a := classify2xx(t, jobs, status, "application/json", out.Payload)
	a.status = status
	return a
}

// functionErrorMessage is the message of a function error: the payload's
// errorType and errorMessage (Lambda's error document) when present.
func functionErrorMessage(kind string, payload []byte) string {
	var doc struct {
		Message string `json:"errorMessage"`
		Type    string `json:"errorType"`
	}
	msg := "function error (" + kind + ")"
	if json.Unmarshal(payload, &doc) == nil && (doc.Message != "" || doc.Type != "") {
		switch {
		case doc.Type != "" && doc.Message != "":
			msg = doc.Type + ": " + doc.Message
		case doc.Message != "":
			msg = doc.Message
		default:
			msg = doc.Type
		}
	}
	return truncate(msg, MaxMessage)
}

func (d *Deliverer) lambdaFailure(ctx, parent context.Context, err error, timeout time.Duration) answer {
	if parent.Err() != nil || ctx.Err() != nil || isTimeout(err) {
		return d.transportFailure(ctx, parent, err, timeout, "")
	}
	var api *LambdaAPIError
	if errors.As(err, &api) && api.Status != 0 {
		a := failAll(GroupHTTP(api.Status), api.Error())
		a.status = api.Status
		a.retryAt = d.retryAfter(api.RetryAfter)
		return a
	}
	return failAll(GroupUnreachable, "Lambda Invoke: "+describeNetErr(err))
}
