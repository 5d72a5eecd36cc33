// Package wake lets the HTTP Lambda functions wake the push dispatcher
// function (package dispatchmain) right after a request made a push
// queue's job due: an asynchronous Lambda invoke (InvocationType Event),
// fire and forget. An invoke that fails is logged and changes nothing for
// the request; the dispatcher's schedule then finds the job within a
// minute.
//
// A burst of creates does not invoke once per job: an instance starts at
// most one invoke per Interval, and none while one has not been written
// yet. (An invoke written but not answered does not hold the next one
// back: the instance may have been frozen since, its answer unread.) The
// dispatcher keeps looking for due jobs for at least its linger
// (dispatchmain.Linger, longer than Interval) after it starts, so a job
// whose wake was coalesced is still delivered by the run the earlier wake
// started.
//
// Lambda freezes an instance once its handler returns, and a frozen
// instance sends nothing. Middleware therefore waits, at the end of a
// request that woke the dispatcher, until the invoke's request has been
// written to the connection (not for its answer), at most Options.Flush.
//
// The invoke is one hand-built request of the Lambda API, signed with
// Signature Version 4 (Client): the HTTP functions that link this package
// do not link the AWS SDK's Lambda client, about 1.4 MB of each bootstrap.
package wake

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/ocyless/ocyless/shared/redisstore"
)

// Environment variables of the functions that wake the dispatcher.
const (
	// EnvDispatcher names the dispatcher function (name or ARN); unset or
	// empty, nothing is woken.
	EnvDispatcher = "OCYPOD_PUSH_DISPATCHER"
	// EnvEndpoint and EnvEndpointAll are the AWS SDKs' own variables for
	// another Lambda API endpoint (a VPC endpoint, or a fake in tests).
	EnvEndpoint    = "AWS_ENDPOINT_URL_LAMBDA"
	EnvEndpointAll = "AWS_ENDPOINT_URL"
)

// Defaults of Options.
const (
	DefaultInterval = 250 * time.Millisecond
	DefaultFlush    = 50 * time.Millisecond
	// invokeTimeout bounds one invoke, which runs on after its request.
	invokeTimeout = 5 * time.Second
)

// Invoker sends one asynchronous invoke (InvocationType Event) of
// function with payload; Client is the Lambda API's. The request it sends
// must carry ctx, whose httptrace.ClientTrace tells the Waker when it has
// been written.
type Invoker interface {
	InvokeAsync(ctx context.Context, function string, payload []byte) error
}

// Options configure a Waker.
type Options struct {
	Client   Invoker // required
	Function string  // the dispatcher's name or ARN; required
	// Interval is the least time between two invokes started by this
	// instance (default DefaultInterval).
	Interval time.Duration
	// Flush is the most a request waits at its end for its invoke to be
	// sent (default DefaultFlush).
	Flush time.Duration
	Log   *slog.Logger     // nil discards
	Now   func() time.Time // nil means time.Now
}

// Waker starts the coalesced invokes of one function instance.
type Waker struct {
	o Options

	mu      sync.Mutex
	last    time.Time     // when the last invoke started
	started uint64        // invokes started so far
	sent    chan struct{} // closed once the in-flight invoke's request is written; nil when none
	running bool          // an invoke is in flight
}

// New makes a Waker.
func New(o Options) *Waker {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Flush <= 0 {
		o.Flush = DefaultFlush
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Waker{o: o}
}

// event is the dispatcher's payload: only logged there.
type event struct {
	Source string `json:"source"`
	Queue  string `json:"queue"`
}

// Source is the event's source field.
const Source = "ocyless.wake"

// Wake starts an asynchronous invoke of the dispatcher for queue, unless
// one is in flight or one started less than Interval ago. It returns at
// once.
func (w *Waker) Wake(queue string) {
	w.mu.Lock()
	now := w.o.Now()
	if w.unsent() || (!w.last.IsZero() && now.Sub(w.last) < w.o.Interval) {
		w.mu.Unlock()
		return
	}
	w.running, w.last = true, now
	w.started++
	sent := make(chan struct{})
	w.sent = sent
	w.mu.Unlock()

	payload, _ := json.Marshal(event{Source: Source, Queue: queue})
	var once sync.Once
	markSent := func() { once.Do(func() { close(sent) }) }
	ctx, cancel := context.WithTimeout(context.Background(), invokeTimeout)
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { markSent() },
	})
	go func() {
		defer cancel()
		err := w.o.Client.InvokeAsync(ctx, w.o.Function, payload)
		select {
		case <-sent:
			if err != nil && ctx.Err() != nil {
				// Written, then no answer in time (the instance may have
				// been frozen meanwhile): the wake most likely arrived.
				w.o.Log.Debug("push: the dispatcher's wake was sent; its answer was not read", slog.String("queue", queue))
				err = nil
			}
		default:
		}
		markSent()
		w.mu.Lock()
		w.running = false
		w.mu.Unlock()
		if err != nil {
			w.o.Log.Warn("push: the dispatcher was not woken; its schedule delivers the job",
				slog.String("queue", queue), slog.String("error", err.Error()))
		}
	}()
}

// unsent reports whether the last invoke's request is not written yet;
// w.mu is held.
func (w *Waker) unsent() bool {
	if w.sent == nil {
		return false
	}
	select {
	case <-w.sent:
		return false
	default:
		return true
	}
}

// Flush waits until the request of the invoke in flight, if any, has been
// written, at most Options.Flush, or until ctx ends.
func (w *Waker) Flush(ctx context.Context) {
	w.mu.Lock()
	sent := w.sent
	w.mu.Unlock()
	if sent == nil {
		return
	}
	t := time.NewTimer(w.o.Flush)
	defer t.Stop()
	select {
	case <-sent:
	case <-t.C:
	case <-ctx.Done():
	}
}

// Middleware serves h, then flushes the invoke the request started, if it
// started one: a request that started none never waits.
func (w *Waker) Middleware(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		before := w.started
		w.mu.Unlock()
		h.ServeHTTP(rw, r)
		w.mu.Lock()
		startedHere := w.started != before
		w.mu.Unlock()
		if startedHere {
			w.Flush(r.Context())
		}
	})
}

// FromEnv builds the Waker of a function from its environment: nil when
// EnvDispatcher is unset. Credentials and region come from the variables
// Lambda sets (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN, AWS_REGION); an invoke is never retried (a lost wake
// costs at most the schedule's minute).
func FromEnv(getenv func(string) (string, bool), log *slog.Logger) (*Waker, error) {
	fn, _ := getenv(EnvDispatcher)
	if fn == "" {
		return nil, nil
	}
	cfg, endpoint, err := AWSConfig(getenv)
	if err != nil {
		return nil, err
	}
	return New(Options{Client: NewClient(cfg, endpoint), Function: fn, Log: log}), nil
}

// Wrap makes a function whose environment names the push dispatcher
// (EnvDispatcher) wake it after a request made a push queue's job due (a
// create, a retry) or changed a queue's settings (push set, a queue
// resumed): h waits at its end, briefly, for the invoke to be sent.
// Without the variable h is returned as it is. It is an httpmain.Wrap,
// passed by the mains of the functions that wake the dispatcher.
func Wrap(getenv func(string) (string, bool), store *redisstore.Store, h http.Handler, log *slog.Logger) (http.Handler, error) {
	w, err := FromEnv(getenv, log)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvDispatcher, err)
	}
	if w == nil {
		return h, nil
	}
	store.OnPushDue(w.Wake)
	store.OnQueueChange(w.Wake)
	return w.Middleware(h), nil
}

// Client sends the Lambda API's Invoke with InvocationType Event:
// POST /2015-03-31/functions/{FunctionName}/invocations with the header
// X-Amz-Invocation-Type: Event, signed with Signature Version 4 for the
// service lambda. An answer other than 202 is an error.
type Client struct {
	// Endpoint is the Lambda API's base URL (default
	// https://lambda.<Region>.amazonaws.com).
	Endpoint    string
	Region      string
	Credentials aws.CredentialsProvider
	HTTP        *http.Client     // nil means a client of its own
	Now         func() time.Time // the signature's clock; nil means time.Now
}

// NewClient makes the Client of cfg's region and credentials, at endpoint
// when it is not "".
func NewClient(cfg aws.Config, endpoint string) *Client {
	if endpoint == "" {
		endpoint = "https://lambda." + cfg.Region + ".amazonaws.com"
	}
	return &Client{Endpoint: endpoint, Region: cfg.Region, Credentials: cfg.Credentials,
		HTTP: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// maxErrorBody bounds the part of an error answer that is kept.
const maxErrorBody = 512

// InvokeAsync sends one asynchronous invoke of function (a name or an ARN).
func (c *Client) InvokeAsync(ctx context.Context, function string, payload []byte) error {
	if c.Credentials == nil {
		return errors.New("lambda invoke: no credentials")
	}
	creds, err := c.Credentials.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("lambda invoke: credentials: %w", err)
	}
	u := strings.TrimRight(c.Endpoint, "/") + "/2015-03-31/functions/" + url.PathEscape(function) + "/invocations"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(payload))
	if err != nil {
		return fmt.Errorf("lambda invoke: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Amz-Invocation-Type", "Event")
	sum := sha256.Sum256(payload)
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "lambda", c.Region, now()); err != nil {
		return fmt.Errorf("lambda invoke: sign: %w", err)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("lambda invoke: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("lambda invoke: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// AWSConfig is the SDK configuration of a Lambda function, from the
// variables Lambda sets, and the Lambda API endpoint to use instead of
// the region's ("" for the region's).
func AWSConfig(getenv func(string) (string, bool)) (aws.Config, string, error) {
	get := func(k string) string { v, _ := getenv(k); return v }
	region := get("AWS_REGION")
	if region == "" {
		region = get("AWS_DEFAULT_REGION")
	}
	if region == "" {
		return aws.Config{}, "", errors.New("AWS_REGION is not set")
	}
	cfg := aws.Config{Region: region}
	if id, secret := get("AWS_ACCESS_KEY_ID"), get("AWS_SECRET_ACCESS_KEY"); id != "" && secret != "" {
		cfg.Credentials = credentials.NewStaticCredentialsProvider(id, secret, get("AWS_SESSION_TOKEN"))
	} else {
		return aws.Config{}, "", errors.New("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set")
	}
	endpoint := get(EnvEndpoint)
	if endpoint == "" {
		endpoint = get(EnvEndpointAll)
	}
	return cfg, endpoint, nil
}

// InFlight reports whether an invoke started by Wake is still under way.
func (w *Waker) InFlight() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running
}
