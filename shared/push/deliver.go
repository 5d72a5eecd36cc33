package push

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ocyless/ocyless/shared/ocypod"
)

// Failure groups of a delivery that did not complete its jobs (§10).
const (
	GroupTimeout       = "push_timeout"
	GroupUnreachable   = "push_unreachable"
	GroupFunctionError = "push_function_error"
	groupHTTPPrefix    = "push_http_"
)

// GroupHTTP is the failure group of an answer with HTTP status code:
// "push_http_<code>".
func GroupHTTP(code int) string { return groupHTTPPrefix + strconv.Itoa(code) }

// Bounds of what the engine reads and keeps.
const (
	// DefaultMaxAnswer is the largest answer body read; a larger one fails
	// the delivery.
	DefaultMaxAnswer = 1 << 20
	// MaxMessage bounds a failure message the engine writes (an excerpt of
	// the answer, a function's error message, a batch item's error).
	MaxMessage = 4 << 10
	// MaxGroup bounds a group a batch answer names (the contract's 128).
	MaxGroup = 128
	// MaxRetryAfter caps how far a Retry-After answer may push a retry.
	MaxRetryAfter = 24 * time.Hour
)

// Job is one job in a delivery, as the store took it.
type Job struct {
	ID      uint64
	Attempt int
	Queue   string
	Input   json.RawMessage // raw JSON; nil or empty is sent as null
}

// Delivery is one POST or invocation: jobs of one queue taken together
// (at most Target.Batch of them).
type Delivery struct {
	Target *Target
	Jobs   []Job
	// Timeout bounds the whole delivery (connect, send, answer). Zero:
	// Target.EffectiveTimeout of a queue without a timeout (15m).
	Timeout time.Duration
}

// Result is what became of one job.
type Result int

const (
	// Completed: the target answered 2xx and did not list the job among
	// its failures.
	Completed Result = iota + 1
	// Failed: the attempt failed; the queue's retry policy applies.
	Failed
	// TimedOut: no answer within the delivery's timeout; the job is
	// treated as timed_out (and retried as the queue says).
	TimedOut
)

func (r Result) String() string {
	switch r {
	case Completed:
		return "completed"
	case Failed:
		return "failed"
	case TimedOut:
		return "timed_out"
	}
	return "unknown"
}

// Failure is the error of a failed or timed-out job, as the job's `error`
// field takes it. Group is empty only for a batch item whose answer named
// none (the store then applies its default group).
type Failure struct {
	Group   string `json:"group,omitempty"`
	Message string `json:"message"`
}

// Outcome is the result of one job of a delivery.
type Outcome struct {
	JobID   uint64
	Attempt int
	Result  Result
	// Output is the job's output when Completed: raw JSON, nil for none.
	Output json.RawMessage
	// Error is set when Failed or TimedOut.
	Error *Failure
	// RetryAt, when not zero, is the due time the target asked for with
	// Retry-After; the store uses it for this retry instead of its backoff.
	RetryAt time.Time
}

// Reporter receives the outcomes of a delivery: the store's side. Report
// gets one outcome per job of the delivery, in the delivery's order.
type Reporter interface {
	Report(ctx context.Context, outcomes []Outcome) error
}

// Options configure a Deliverer.
type Options struct {
	// Policy judges every target at delivery time too. Required.
	Policy *Policy
	// Lambda invokes functions; nil fails Lambda targets as unreachable.
	Lambda LambdaInvoker
	// Logger gets one line per failed delivery and a debug line per
	// completed one (default slog.Default()). It never sees a secret, a
	// body or a URL's query.
	Logger *slog.Logger
	// Now is the clock for signatures and Retry-After (default time.Now).
	Now func() time.Time
	// MaxAnswer bounds the answer read (default DefaultMaxAnswer).
	MaxAnswer int64
	// UserAgent is sent with every request (default "ocyless-push").
	UserAgent string
}

// Deliverer sends deliveries and classifies their answers. It is safe for
// concurrent use; it does not limit concurrency nor track jobs in flight
// (Engine does).
type Deliverer struct {
	pol       *Policy
	client    *http.Client
	lambda    LambdaInvoker
	log       *slog.Logger
	now       func() time.Time
	maxAnswer int64
	userAgent string
}

// New makes a Deliverer. Its HTTP client dials through the policy, follows
// no redirect and uses no proxy.
func New(o Options) *Deliverer {
	if o.Policy == nil {
		panic("push.New: Options.Policy is required")
	}
	d := &Deliverer{pol: o.Policy, lambda: o.Lambda, log: o.Logger, now: o.Now, maxAnswer: o.MaxAnswer, userAgent: o.UserAgent}
	if d.log == nil {
		d.log = slog.Default()
	}
	if d.now == nil {
		d.now = time.Now
	}
	if d.maxAnswer <= 0 {
		d.maxAnswer = DefaultMaxAnswer
	}
	if d.userAgent == "" {
		d.userAgent = "ocyless-push"
	}
	d.client = &http.Client{
		Transport:     o.Policy.Transport(),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return d
}

// Close drops idle connections.
func (d *Deliverer) Close() { d.client.CloseIdleConnections() }

// wireJob is one job as the target receives it.
type wireJob struct {
	ID      uint64          `json:"id"`
	Attempt int             `json:"attempt"`
	Queue   string          `json:"queue"`
	Input   json.RawMessage `json:"input"`
}

// EncodeBody is the body of a delivery: {"id","attempt","queue","input"},
// or an array of those when the target's batch is above 1 (even for one
// job), so a batch target always reads an array.
func EncodeBody(t *Target, jobs []Job) ([]byte, error) {
	items := make([]wireJob, len(jobs))
	for i, j := range jobs {
		in := j.Input
		if len(bytes.TrimSpace(in)) == 0 {
			in = json.RawMessage("null")
		} else if !json.Valid(in) {
			return nil, fmt.Errorf("push: job %d: input is not valid JSON", j.ID)
		}
		items[i] = wireJob{ID: j.ID, Attempt: j.Attempt, Queue: j.Queue, Input: in}
	}
	if t.Batch > 1 {
		return json.Marshal(items)
	}
	if len(items) != 1 {
		return nil, fmt.Errorf("push: a target with batch 1 gets one job per delivery, not %d", len(items))
	}
	return json.Marshal(items[0])
}

// Deliver sends one delivery and returns one outcome per job, in order. It
// never returns early without outcomes: every fault (policy, network,
// timeout, answer) becomes a Failed or TimedOut outcome.
func (d *Deliverer) Deliver(ctx context.Context, dl Delivery) []Outcome {
	start := d.now()
	var res answer
	switch {
	case dl.Target == nil || len(dl.Jobs) == 0:
		res = failAll(GroupUnreachable, "push: empty delivery")
	case len(dl.Jobs) > dl.Target.Batch:
		res = failAll(GroupUnreachable, fmt.Sprintf("push: %d jobs for a target with batch %d", len(dl.Jobs), dl.Target.Batch))
	default:
		timeout := dl.Timeout
		if timeout <= 0 {
			timeout = dl.Target.EffectiveTimeout(ocypod.Duration{})
		}
		body, err := EncodeBody(dl.Target, dl.Jobs)
		if err != nil {
			res = failAll(GroupUnreachable, err.Error())
			break
		}
		dctx, cancel := context.WithTimeout(ctx, timeout)
		if dl.Target.Lambda != "" {
			res = d.invoke(dctx, ctx, dl.Target, dl.Jobs, body, timeout)
		} else {
			res = d.post(dctx, ctx, dl, body, timeout)
		}
		cancel()
	}
	outs := res.outcomes(dl.Jobs)
	d.logDelivery(dl, res, outs, d.now().Sub(start))
	return outs
}

// answer is a delivery's classified result before it is spread over jobs.
type answer struct {
	fail     *Failure // the whole delivery failed
	timedOut bool
	retryAt  time.Time
	status   int
	output   json.RawMessage     // batch 1: the output
	failures map[uint64]*Failure // batch > 1: failed items
	noErr    map[uint64]bool     // batch > 1: failed items without an error
}

func failAll(group, msg string) answer {
	return answer{fail: &Failure{Group: group, Message: truncate(msg, MaxMessage)}}
}

func (a answer) outcomes(jobs []Job) []Outcome {
	out := make([]Outcome, len(jobs))
	for i, j := range jobs {
		o := Outcome{JobID: j.ID, Attempt: j.Attempt}
		switch {
		case a.fail != nil:
			o.Result = Failed
			if a.timedOut {
				o.Result = TimedOut
			}
			f := *a.fail
			o.Error = &f
			o.RetryAt = a.retryAt
		case a.failures[j.ID] != nil || a.noErr[j.ID]:
			o.Result = Failed
			o.Error = a.failures[j.ID]
		default:
			o.Result = Completed
			if len(jobs) == 1 && a.failures == nil {
				o.Output = a.output
			}
		}
		out[i] = o
	}
	return out
}

func (d *Deliverer) post(ctx, parent context.Context, dl Delivery, body []byte, timeout time.Duration) answer {
	t := dl.Target
	if err := d.pol.CheckURL(t.URL); err != nil {
		return failAll(GroupUnreachable, "target refused: "+err.Error())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return failAll(GroupUnreachable, "push: cannot build the request")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", d.userAgent)
	if t.Batch == 1 {
		req.Header.Set("Ocyless-Job-Id", strconv.FormatUint(dl.Jobs[0].ID, 10))
		req.Header.Set("Ocyless-Attempt", strconv.Itoa(dl.Jobs[0].Attempt))
	}
	req.Header.Set(SignatureHeader, Sign(t.Secret.Bytes(), d.now(), body))
	resp, err := d.client.Do(req)
	if err != nil {
		return d.transportFailure(ctx, parent, err, timeout, "")
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, d.maxAnswer+1))
	if err != nil {
		return d.transportFailure(ctx, parent, err, timeout, fmt.Sprintf("after HTTP %d, ", resp.StatusCode))
	}
	if int64(len(data)) > d.maxAnswer {
		return failAll(GroupHTTP(resp.StatusCode), fmt.Sprintf("answer larger than %d bytes (HTTP %d)", d.maxAnswer, resp.StatusCode))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		a := failAll(GroupHTTP(resp.StatusCode), httpMessage(resp, data))
		a.retryAt = d.retryAfter(resp.Header.Get("Retry-After"))
		a.status = resp.StatusCode
		return a
	}
	a := classify2xx(t, dl.Jobs, resp.StatusCode, resp.Header.Get("Content-Type"), data)
	a.status = resp.StatusCode
	return a
}

// transportFailure classifies a failed request or answer read.
func (d *Deliverer) transportFailure(ctx, parent context.Context, err error, timeout time.Duration, when string) answer {
	if parent.Err() != nil {
		return failAll(GroupUnreachable, when+"delivery interrupted: the server is stopping")
	}
	if ctx.Err() != nil || isTimeout(err) {
		a := failAll(GroupTimeout, fmt.Sprintf("%sno complete answer within %s", when, timeout))
		a.timedOut = true
		return a
	}
	var refused *refusedError
	if errors.As(err, &refused) {
		return failAll(GroupUnreachable, refused.Error())
	}
	return failAll(GroupUnreachable, when+describeNetErr(err))
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// describeNetErr is a network error without the request URL (whose query
// may hold credentials).
func describeNetErr(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr):
		return "cannot resolve " + dnsErr.Name + ": " + dnsErr.Err
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed before a complete answer"
	}
	return "connection failed: " + err.Error()
}

// httpMessage is the failure message of a non-2xx answer: the status and
// the start of the body, or for a 3xx the redirect not followed.
func httpMessage(resp *http.Response, data []byte) string {
	msg := "HTTP " + resp.Status
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		msg += ": redirects are not followed"
		if loc := resp.Header.Get("Location"); loc != "" {
			msg += " (Location: " + redactURL(loc) + ")"
		}
		return truncate(msg, MaxMessage)
	}
	if ex := strings.TrimSpace(string(bytes.ToValidUTF8(data, []byte("\uFFFD")))); ex != "" {
		msg += ": " + ex
	}
	return truncate(msg, MaxMessage)
}

// retryAfter reads Retry-After: delta-seconds or an HTTP-date, capped at
// MaxRetryAfter; zero when absent or unreadable.
func (d *Deliverer) retryAfter(v string) time.Time {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}
	}
	now := d.now()
	var at time.Time
	if n, err := strconv.ParseUint(v, 10, 63); err == nil {
		if n > uint64(MaxRetryAfter/time.Second) {
			n = uint64(MaxRetryAfter / time.Second)
		}
		at = now.Add(time.Duration(n) * time.Second)
	} else if t, err := http.ParseTime(v); err == nil {
		at = t
	} else {
		return time.Time{}
	}
	if at.Before(now) {
		at = now
	}
	if at.After(now.Add(MaxRetryAfter)) {
		at = now.Add(MaxRetryAfter)
	}
	return at
}

// classify2xx reads a 2xx answer. Batch 1: a JSON body is the output, an
// empty one no output, a non-JSON one a JSON string output, unless the
// answer says it is JSON (Content-Type application/json or +json) and is
// not: that fails the attempt. Batch > 1: {"failures": [{"id", "error"?}]}
// fails those jobs; the others complete without output.
func classify2xx(t *Target, jobs []Job, status int, contentType string, data []byte) answer {
	trimmed := bytes.TrimSpace(data)
	valid := len(trimmed) > 0 && json.Valid(trimmed)
	if len(trimmed) > 0 && !valid && declaresJSON(contentType) {
		return failAll(GroupHTTP(status), fmt.Sprintf("HTTP %d answer declared as JSON is not valid JSON", status))
	}
	if t.Batch == 1 {
		switch {
		case len(trimmed) == 0:
			return answer{}
		case valid:
			return answer{output: json.RawMessage(bytes.Clone(trimmed))}
		default:
			s, _ := json.Marshal(string(bytes.ToValidUTF8(data, []byte("\uFFFD"))))
			return answer{output: s}
		}
	}
	if !valid || trimmed[0] != '{' {
		return answer{}
	}
	var doc struct {
		Failures json.RawMessage `json:"failures"`
	}
	if err := json.Unmarshal(trimmed, &doc); err != nil || doc.Failures == nil {
		return answer{}
	}
	var items []struct {
		ID    json.RawMessage `json:"id"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(doc.Failures, &items); err != nil {
		return failAll(GroupHTTP(status), `batch answer: "failures" must be a list of {"id", "error"?}`)
	}
	inBatch := map[uint64]bool{}
	for _, j := range jobs {
		inBatch[j.ID] = true
	}
	a := answer{failures: map[uint64]*Failure{}, noErr: map[uint64]bool{}}
	for _, it := range items {
		id, ok := parseID(it.ID)
		if !ok {
			return failAll(GroupHTTP(status), `batch answer: a "failures" item has no job id`)
		}
		if !inBatch[id] {
			continue // not a job of this delivery: nothing to fail
		}
		if f := itemFailure(it.Error); f != nil {
			a.failures[id] = f
		} else {
			a.noErr[id] = true
		}
	}
	return a
}

func declaresJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// parseID reads a job id given as a number or a decimal string.
func parseID(raw json.RawMessage) (uint64, bool) {
	s := strings.TrimSpace(string(raw))
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// itemFailure reads a batch item's error: a string (the message) or an
// object {"group"?, "message"?}; nil when absent or null.
func itemFailure(raw json.RawMessage) *Failure {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil
	}
	var msg string
	if json.Unmarshal(raw, &msg) == nil {
		return &Failure{Message: truncate(msg, MaxMessage)}
	}
	var f Failure
	if json.Unmarshal(raw, &f) == nil {
		return &Failure{Group: truncate(f.Group, MaxGroup), Message: truncate(f.Message, MaxMessage)}
	}
	return &Failure{Message: truncate(s, MaxMessage)}
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

func (d *Deliverer) logDelivery(dl Delivery, a answer, outs []Outcome, took time.Duration) {
	ids := make([]uint64, len(dl.Jobs))
	for i, j := range dl.Jobs {
		ids[i] = j.ID
	}
	attrs := []any{slog.Any("jobs", ids), slog.Duration("took", took)}
	if len(dl.Jobs) > 0 {
		attrs = append(attrs, slog.String("queue", dl.Jobs[0].Queue))
	}
	if dl.Target != nil {
		attrs = append(attrs, slog.Any("target", *dl.Target))
	}
	if a.status != 0 {
		attrs = append(attrs, slog.Int("status", a.status))
	}
	if a.fail != nil {
		attrs = append(attrs, slog.String("group", a.fail.Group), slog.String("message", a.fail.Message))
		d.log.Warn("push delivery failed", attrs...)
		return
	}
	failed := 0
	for _, o := range outs {
		if o.Result != Completed {
			failed++
		}
	}
	attrs = append(attrs, slog.Int("failed", failed))
	d.log.Debug("push delivery answered", attrs...)
}
