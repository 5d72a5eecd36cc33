package push

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Callback retry schedule (§11): from 1s doubling to at most 1h, for 24h.
const (
	CallbackFirstRetry  = time.Second
	CallbackMaxRetry    = time.Hour
	CallbackGiveUpAfter = 24 * time.Hour
	// CallbackTimeout bounds one callback POST.
	CallbackTimeout = 30 * time.Second
)

// CallbackBackoff is the wait before the next try after attempts failed
// tries (attempts >= 1): 1s, 2s, 4s, ... capped at 1h.
func CallbackBackoff(attempts int) time.Duration {
	d := CallbackFirstRetry
	for i := 1; i < attempts && d < CallbackMaxRetry; i++ {
		d *= 2
	}
	return min(d, CallbackMaxRetry)
}

// CallbackResult is what became of one callback try.
type CallbackResult struct {
	// Delivered: the URL answered 2xx; the callback is done.
	Delivered bool
	// Error says why not (same groups as a delivery).
	Error *Failure
	// RetryAt is the Retry-After the URL asked for, if any; otherwise the
	// caller waits CallbackBackoff.
	RetryAt time.Time
}

// SendCallback POSTs body (the job object without its input) to the
// callback's URL, signed with its secret as deliveries are, with the same
// policy, no redirects and a bounded answer. jobID goes in Ocyless-Job-Id.
// The answer's body is ignored except in the failure message.
func (d *Deliverer) SendCallback(ctx context.Context, cb *Callback, jobID uint64, body []byte) CallbackResult {
	res := d.sendCallback(ctx, cb, jobID, body)
	if res.Error != nil {
		d.log.Warn("push callback failed", "job", jobID, "callback", *cb, "group", res.Error.Group, "message", res.Error.Message)
	}
	return res
}

func (d *Deliverer) sendCallback(parent context.Context, cb *Callback, jobID uint64, body []byte) CallbackResult {
	fail := func(a answer) CallbackResult { return CallbackResult{Error: a.fail, RetryAt: a.retryAt} }
	if err := d.pol.CheckURL(cb.URL); err != nil {
		return fail(failAll(GroupUnreachable, "target refused: "+err.Error()))
	}
	ctx, cancel := context.WithTimeout(parent, CallbackTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cb.URL, bytes.NewReader(body))
	if err != nil {
		return fail(failAll(GroupUnreachable, "push: cannot build the request"))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", d.userAgent)
	req.Header.Set("Ocyless-Job-Id", strconv.FormatUint(jobID, 10))
	req.Header.Set(SignatureHeader, Sign(cb.Secret.Bytes(), d.now(), body))
	resp, err := d.client.Do(req)
	if err != nil {
		return fail(d.transportFailure(ctx, parent, err, CallbackTimeout, ""))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, d.maxAnswer+1))
	if err != nil {
		return fail(d.transportFailure(ctx, parent, err, CallbackTimeout, fmt.Sprintf("after HTTP %d, ", resp.StatusCode)))
	}
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return CallbackResult{Delivered: true}
	}
	if int64(len(data)) > d.maxAnswer {
		data = data[:d.maxAnswer]
	}
	a := failAll(GroupHTTP(resp.StatusCode), httpMessage(resp, data))
	a.retryAt = d.retryAfter(resp.Header.Get("Retry-After"))
	return fail(a)
}
