package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls an ocyless server. It is safe for concurrent use.
type Client struct {
	base       *url.URL
	prefix     string // the base URL's path, without its trailing slash
	hc         *http.Client
	maxRetries int
	backoff    time.Duration
	maxBackoff time.Duration
	userAgent  string
	// sleep waits d or until ctx ends; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

// Option configures a Client.
type Option func(*options)

type options struct {
	hc         *http.Client
	transport  http.RoundTripper
	maxRetries int
	backoff    time.Duration
	userAgent  string
}

// WithHTTPClient sends requests with hc instead of a client of the
// Client's own. A Timeout on hc bounds every call, long polls included: keep
// it above the longest take wait (at most 20s) you ask for.
func WithHTTPClient(hc *http.Client) Option { return func(o *options) { o.hc = hc } }

// WithTransport sends requests through rt, on a copy of the HTTP client
// (WithHTTPClient's, or the default one). This is the hook for request
// signing: a RoundTripper that adds an AWS Signature Version 4 before
// passing the request on lets the client call an API deployed with
// ApiAuth=AWS_IAM (see the package documentation). Request bodies can be
// read through Request.GetBody, so rt may hash them without consuming
// them.
func WithTransport(rt http.RoundTripper) Option { return func(o *options) { o.transport = rt } }

// WithRetries sets how many times a call is sent again after a failure
// that is safe to retry (see the package documentation), and the first
// wait between attempts, doubled at each attempt (with jitter) up to 32
// times. max 0 turns retries off. The default is 3 retries from 100ms.
func WithRetries(max int, backoff time.Duration) Option {
	return func(o *options) { o.maxRetries, o.backoff = max, backoff }
}

// WithUserAgent sets the User-Agent header of every request.
func WithUserAgent(ua string) Option { return func(o *options) { o.userAgent = ua } }

// DefaultUserAgent is the User-Agent header sent unless WithUserAgent
// replaces it.
const DefaultUserAgent = "ocyless-go-client"

// New returns a client of the server at baseURL, such as
// "http://127.0.0.1:8023" or an API Gateway URL (a path prefix is kept).
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("ocyless: base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("ocyless: base URL %q: want http:// or https:// and a host", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("ocyless: base URL %q: no query or fragment allowed", baseURL)
	}
	o := options{maxRetries: 3, backoff: 100 * time.Millisecond, userAgent: DefaultUserAgent}
	for _, opt := range opts {
		opt(&o)
	}
	if o.maxRetries < 0 || o.backoff < 0 {
		return nil, errors.New("ocyless: WithRetries: negative value")
	}
	hc := o.hc
	if hc == nil {
		hc = &http.Client{}
	}
	if o.transport != nil {
		cp := *hc
		cp.Transport = o.transport
		hc = &cp
	}
	return &Client{
		base:       &url.URL{Scheme: u.Scheme, Host: u.Host, User: u.User},
		prefix:     strings.TrimSuffix(u.EscapedPath(), "/"),
		hc:         hc,
		maxRetries: o.maxRetries,
		backoff:    o.backoff,
		maxBackoff: o.backoff << 5,
		userAgent:  o.userAgent,
		sleep:      sleepCtx,
	}, nil
}

// safety says when a call may be sent again.
type safety int

const (
	// notIdempotent calls are sent again only after a 429 (a gateway's
	// throttle, which refused the request before anything ran).
	notIdempotent safety = iota
	// idempotent calls are also sent again after a 502, 503 or 504 or a
	// failed connection: repeating them changes nothing more.
	idempotent
)

// call is one API request.
type call struct {
	method string
	path   string // escaped, from the route table
	query  url.Values
	body   []byte // nil: no body
	safety safety
}

// response is a 2xx answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// where names the call in errors: its method, path and query.
func (c *call) where() string {
	if len(c.query) == 0 {
		return c.path
	}
	return c.path + "?" + c.query.Encode()
}

// do sends the call, again after failures that are safe to retry, and
// returns its 2xx answer or an error (*Error for any other status).
func (c *Client) do(ctx context.Context, cl call) (*response, error) {
	u := *c.base
	u.RawPath = c.prefix + cl.path
	u.Path, _ = url.PathUnescape(u.RawPath)
	u.RawQuery = cl.query.Encode()
	target := u.String()
	for attempt := 0; ; attempt++ {
		resp, err := c.send(ctx, cl, target)
		retry, wait := c.retryable(cl, resp, err)
		if !retry || attempt >= c.maxRetries || ctx.Err() != nil {
			if err != nil {
				return nil, err
			}
			if resp.status/100 == 2 {
				return resp, nil
			}
			return nil, &Error{StatusCode: resp.status, Message: string(resp.body), Method: cl.method, Path: cl.where()}
		}
		if err := c.sleep(ctx, max(wait, c.delay(attempt))); err != nil {
			return nil, fmt.Errorf("ocyless: %s %s: %w", cl.method, cl.where(), err)
		}
	}
}

// send makes one attempt. A response of any status is not an error.
func (c *Client) send(ctx context.Context, cl call, target string) (*response, error) {
	var body io.Reader
	if cl.body != nil {
		body = bytes.NewReader(cl.body)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, target, body)
	if err != nil {
		return nil, fmt.Errorf("ocyless: %s %s: %w", cl.method, cl.where(), err)
	}
	if cl.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("ocyless: %s %s: %w", cl.method, cl.where(), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("ocyless: %s %s: reading the answer: %w", cl.method, cl.where(), err)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// retryable says whether an attempt's outcome may be retried, and the
// least wait the server asked for (Retry-After).
func (c *Client) retryable(cl call, resp *response, err error) (bool, time.Duration) {
	if err != nil {
		// The request may have reached the server: only idempotent calls
		// go again. A cancelled context is not retried (checked by do).
		return cl.safety == idempotent, 0
	}
	wait := retryAfter(resp.header)
	switch resp.status {
	case http.StatusTooManyRequests:
		return true, wait
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return cl.safety == idempotent, wait
	}
	return false, 0
}

// retryAfter reads a Retry-After header given in seconds (at most a
// minute is honoured).
func retryAfter(h http.Header) time.Duration {
	n, err := strconv.Atoi(h.Get("Retry-After"))
	if err != nil || n <= 0 {
		return 0
	}
	return min(time.Duration(n)*time.Second, time.Minute)
}

// delay is the wait before retry attempt+1: the backoff doubled per
// attempt, capped, with the upper half jittered so that many clients
// retrying together spread out.
func (c *Client) delay(attempt int) time.Duration {
	d := c.backoff
	for range attempt {
		if d >= c.maxBackoff/2 {
			d = c.maxBackoff
			break
		}
		d *= 2
	}
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// decode reads a JSON answer into v.
func decode(cl call, resp *response, v any) error {
	if err := json.Unmarshal(resp.body, v); err != nil {
		return fmt.Errorf("ocyless: %s %s: reading the answer %.200q: %w", cl.method, cl.where(), resp.body, err)
	}
	return nil
}

// get sends an idempotent GET and decodes its JSON answer into v.
func (c *Client) get(ctx context.Context, path string, query url.Values, v any) error {
	cl := call{method: http.MethodGet, path: path, query: query, safety: idempotent}
	resp, err := c.do(ctx, cl)
	if err != nil {
		return err
	}
	return decode(cl, resp, v)
}

// esc escapes one path segment.
func esc(s string) string { return url.PathEscape(s) }

// jobPath is /job/<id> followed by suffix.
func jobPath(id uint64, suffix string) string {
	return "/job/" + strconv.FormatUint(id, 10) + suffix
}

// attemptQuery is ?attempt=<n>, nil for 0 (not fenced).
func attemptQuery(attempt uint64) url.Values {
	if attempt == 0 {
		return nil
	}
	return url.Values{"attempt": {strconv.FormatUint(attempt, 10)}}
}
