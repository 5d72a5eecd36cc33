package push

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"
)

// fakeLambda is a LambdaInvoker answering from a function of the payload.
type fakeLambda struct {
	calls []string // function names invoked
	fn    func(ctx context.Context, payload []byte) (LambdaAnswer, error)
}

func (f *fakeLambda) InvokeLambda(ctx context.Context, function string, payload []byte) (LambdaAnswer, error) {
	f.calls = append(f.calls, function)
	return f.fn(ctx, payload)
}

func lambdaTarget(name string, batch int) *Target {
	return &Target{Lambda: name, Batch: batch, Concurrency: 1, Secret: SecretFrom([]byte(testSecret))}
}

// TestLambdaAnswers: how the engine reads what a LambdaInvoker returns
// (the SDK side is package awslambda's, tested against the Runtime
// Interface Emulator there).
func TestLambdaAnswers(t *testing.T) {
	clock := &fixedClock{t: time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC)}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	cases := []struct {
		name    string
		answer  LambdaAnswer
		err     error
		result  Result
		group   string
		message string
		output  string
		retryAt time.Time
	}{
		{name: "output", answer: LambdaAnswer{Status: 200, Payload: []byte(`{"ok": 1}`)}, result: Completed, output: `{"ok": 1}`},
		{name: "status 0 is 200", answer: LambdaAnswer{Payload: []byte(`"x"`)}, result: Completed, output: `"x"`},
		{name: "not JSON", answer: LambdaAnswer{Status: 200, Payload: []byte(`x`)}, result: Failed, group: "push_http_200"},
		{name: "function error", answer: LambdaAnswer{Status: 200, FunctionError: "Unhandled", Payload: []byte(`{"errorMessage": "boom", "errorType": "E"}`)},
			result: Failed, group: GroupFunctionError, message: "E: boom"},
		{name: "function error, no document", answer: LambdaAnswer{Status: 200, FunctionError: "Handled", Payload: []byte(`"plain"`)},
			result: Failed, group: GroupFunctionError, message: "function error (Handled)"},
		{name: "too big", answer: LambdaAnswer{Status: 200, Payload: []byte(`"` + strings.Repeat("x", 100) + `"`)},
			result: Failed, group: "push_http_200", message: "function answer larger than 64 bytes"},
		{name: "throttled", err: fmt.Errorf("wrapped: %w", &LambdaAPIError{Status: 429, Code: "TooManyRequestsException", Message: "Rate Exceeded.", RetryAfter: "7"}),
			result: Failed, group: "push_http_429", message: "Lambda Invoke: TooManyRequestsException: Rate Exceeded.", retryAt: clock.t.Add(7 * time.Second)},
		{name: "API error without a code", err: &LambdaAPIError{Status: 502},
			result: Failed, group: "push_http_502", message: "Lambda Invoke: HTTP 502"},
		{name: "unreachable", err: fmt.Errorf("operation error: %w", &url.Error{Op: "Post", URL: "https://lambda.example/?X-Amz-Security-Token=t", Err: refused}),
			result: Failed, group: GroupUnreachable, message: "Lambda Invoke: connection failed: dial tcp: connect: connection refused"},
		{name: "timeout", err: fmt.Errorf("operation error: %w", context.DeadlineExceeded),
			result: TimedOut, group: GroupTimeout, message: "no complete answer within 5s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeLambda{fn: func(context.Context, []byte) (LambdaAnswer, error) { return c.answer, c.err }}
			d := newDeliverer(t, Options{Lambda: f, Now: clock.Now, MaxAnswer: 64})
			o := d.Deliver(context.Background(), Delivery{Target: lambdaTarget("worker", 1), Jobs: []Job{job(1, `{}`)}, Timeout: 5 * time.Second})[0]
			if o.Result != c.result || !o.RetryAt.Equal(c.retryAt) || string(o.Output) != c.output {
				t.Fatalf("%v output %s retry at %v, error %+v", o.Result, o.Output, o.RetryAt, o.Error)
			}
			if c.group != "" && (o.Error == nil || o.Error.Group != c.group || (c.message != "" && o.Error.Message != c.message)) {
				t.Fatalf("error %+v, want %s %q", o.Error, c.group, c.message)
			}
			if len(f.calls) != 1 || f.calls[0] != "worker" {
				t.Fatalf("calls %v", f.calls)
			}
		})
	}
}

// TestLambdaPayload: the function gets the delivery body as its event,
// an array for a batch target, and a batch answer's failures fail those
// jobs.
func TestLambdaPayload(t *testing.T) {
	var got string
	f := &fakeLambda{fn: func(_ context.Context, p []byte) (LambdaAnswer, error) {
		got = string(p)
		return LambdaAnswer{Status: 200, Payload: []byte(`{"failures": [{"id": 2, "error": "no"}]}`)}, nil
	}}
	d := newDeliverer(t, Options{Lambda: f})
	outs := d.Deliver(context.Background(), Delivery{Target: lambdaTarget("w", 10), Jobs: []Job{job(1, `{"a":1}`), job(2, `null`)}, Timeout: time.Second})
	if want := `[{"id":1,"attempt":1,"queue":"q","input":{"a":1}},{"id":2,"attempt":1,"queue":"q","input":null}]`; got != want {
		t.Fatalf("event %s, want %s", got, want)
	}
	if outs[0].Result != Completed || outs[1].Result != Failed || outs[1].Error.Message != "no" {
		t.Fatalf("%+v", outs)
	}
}

func TestLambdaWithoutClient(t *testing.T) {
	o := newDeliverer(t, Options{}).Deliver(context.Background(), Delivery{Target: lambdaTarget("f", 1), Jobs: []Job{job(1, `1`)}, Timeout: time.Second})[0]
	if o.Result != Failed || o.Error.Group != GroupUnreachable {
		t.Fatalf("%+v", o)
	}
}
