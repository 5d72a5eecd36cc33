package iamauth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

const (
	testKey     = "AKIDEXAMPLE"
	testSecret  = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	testSession = "session/token+=="
)

var t0 = time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)

// countingCreds is a credentials provider that counts its calls.
type countingCreds struct {
	calls atomic.Int64
	creds aws.Credentials
	err   error
}

func (c *countingCreds) Retrieve(context.Context) (aws.Credentials, error) {
	c.calls.Add(1)
	return c.creds, c.err
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }
func (c *clock) Set(t time.Time)     { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }
func newClock(t time.Time) *clock    { return &clock{now: t} }
func staticCreds() *countingCreds    { return &countingCreds{creds: creds()} }
func creds() aws.Credentials {
	return aws.Credentials{AccessKeyID: testKey, SecretAccessKey: testSecret, SessionToken: testSession}
}
func hmacSHA256(key []byte, s string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(s))
	return h.Sum(nil)
}

func TestTokenShape(t *testing.T) {
	t.Parallel()
	for _, serverless := range []bool{false, true} {
		p := New(Options{UserID: "iam-user-01", CacheName: "My-Cache", Region: "eu-west-1", Serverless: serverless,
			Credentials: staticCreds(), Now: newClock(t0).Now})
		tok, err := p.Token(t.Context())
		if err != nil {
			t.Fatalf("Token() error = %v", err)
		}
		if !strings.HasPrefix(tok, "my-cache/?") {
			t.Fatalf("Token() = %q, want the lower-cased cache name, then /?", tok)
		}
		if strings.Contains(tok, "://") {
			t.Errorf("Token() = %q still has a scheme", tok)
		}
		u, err := url.Parse("http://" + tok)
		if err != nil {
			t.Fatalf("token does not parse as a URL: %v", err)
		}
		q := u.Query()
		want := map[string]string{
			"Action":               "connect",
			"User":                 "iam-user-01",
			"X-Amz-Algorithm":      "AWS4-HMAC-SHA256",
			"X-Amz-Credential":     testKey + "/20240301/eu-west-1/elasticache/aws4_request",
			"X-Amz-Date":           "20240301T100000Z",
			"X-Amz-Expires":        "900",
			"X-Amz-SignedHeaders":  "host",
			"X-Amz-Security-Token": testSession,
		}
		if serverless {
			want["ResourceType"] = "ServerlessCache"
		}
		for k, v := range want {
			if got := q.Get(k); got != v {
				t.Errorf("serverless=%t: %s = %q, want %q", serverless, k, got, v)
			}
		}
		if !serverless && q.Has("ResourceType") {
			t.Errorf("ResourceType present for a node-based cache")
		}
		if len(q) != len(want)+1 {
			t.Errorf("serverless=%t: query has %d parameters, want %d: %v", serverless, len(q), len(want)+1, q)
		}
		if sig := q.Get("X-Amz-Signature"); !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(sig) {
			t.Errorf("X-Amz-Signature = %q, want 64 hex digits", sig)
		}
		if got, want := q.Get("X-Amz-Signature"), expectedSignature(t, u); got != want {
			t.Errorf("X-Amz-Signature = %s, independent SigV4 computation gives %s", got, want)
		}
	}
}

// expectedSignature recomputes the SigV4 query-string signature of u
// independently of the SDK (AWS "Create a signed request", query variant).
func expectedSignature(t *testing.T, u *url.URL) string {
	t.Helper()
	q := u.Query()
	q.Del("X-Amz-Signature")
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var pairs []string
	for _, k := range keys {
		pairs = append(pairs, awsEscape(k)+"="+awsEscape(q.Get(k)))
	}
	canonical := strings.Join([]string{"GET", "/", strings.Join(pairs, "&"), "host:" + u.Host, "", "host", emptySHA256}, "\n")
	sum := sha256.Sum256([]byte(canonical))
	date := q.Get("X-Amz-Date")
	scope := date[:8] + "/eu-west-1/elasticache/aws4_request"
	toSign := strings.Join([]string{"AWS4-HMAC-SHA256", date, scope, hex.EncodeToString(sum[:])}, "\n")
	k := hmacSHA256([]byte("AWS4"+testSecret), date[:8])
	k = hmacSHA256(k, "eu-west-1")
	k = hmacSHA256(k, "elasticache")
	k = hmacSHA256(k, "aws4_request")
	return hex.EncodeToString(hmacSHA256(k, toSign))
}

// awsEscape is SigV4's URI encoding: everything but A-Za-z0-9-_.~ escaped.
func awsEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("-_.~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func TestTokenCachedAndRefreshed(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clk := newClock(t0)
	cc := staticCreds()
	p := New(Options{UserID: "u", CacheName: "c", Region: "us-east-1", Credentials: cc, Now: clk.Now})
	first, err := p.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	clk.Add(9*time.Minute + 59*time.Second)
	if tok, _ := p.Token(ctx); tok != first {
		t.Errorf("Token() after 9m59s = new token, want the cached one")
	}
	if n := cc.calls.Load(); n != 1 {
		t.Errorf("credentials retrieved %d times, want 1", n)
	}
	clk.Add(time.Second)
	second, _ := p.Token(ctx)
	if second == first || !strings.Contains(second, "X-Amz-Date=20240301T101000Z") {
		t.Errorf("Token() after 10m = %q, want a fresh token dated 10:10:00", second)
	}
	// A clock that goes backwards must not keep a token from the future.
	clk.Set(t0.Add(-time.Hour))
	if third, _ := p.Token(ctx); third == second || !strings.Contains(third, "X-Amz-Date=20240301T090000Z") {
		t.Errorf("Token() after the clock went back = %q, want a fresh token", third)
	}

	user, pass, err := p.Credentials(ctx)
	if err != nil || user != "u" || !strings.HasPrefix(pass, "c/?Action=connect") {
		t.Errorf("Credentials() = %q, %q, %v", user, pass, err)
	}

	// RefreshAfter is configurable and capped to the token lifetime.
	if p := New(Options{RefreshAfter: time.Hour}); p.opts.RefreshAfter != TokenLifetime {
		t.Errorf("RefreshAfter 1h became %s, want %s", p.opts.RefreshAfter, TokenLifetime)
	}
}

func TestTokenRefreshedBeforeCredentialsExpire(t *testing.T) {
	t.Parallel()
	clk := newClock(t0)
	c := creds()
	c.CanExpire, c.Expires = true, t0.Add(3*time.Minute)
	cc := &countingCreds{creds: c}
	p := New(Options{UserID: "u", CacheName: "c", Region: "us-east-1", Credentials: cc, Now: clk.Now})
	first, _ := p.Token(t.Context())
	clk.Add(time.Minute + 59*time.Second)
	if tok, _ := p.Token(t.Context()); tok != first {
		t.Errorf("token replaced before the credentials' margin")
	}
	clk.Add(time.Second)
	if tok, _ := p.Token(t.Context()); tok == first {
		t.Errorf("token kept although its credentials expire within a minute")
	}
}

func TestTokenConcurrent(t *testing.T) {
	t.Parallel()
	cc := staticCreds()
	p := New(Options{UserID: "u", CacheName: "c", Region: "us-east-1", Credentials: cc, Now: newClock(t0).Now})
	var wg sync.WaitGroup
	toks := make([]string, 32)
	for i := range toks {
		wg.Go(func() {
			tok, err := p.Token(t.Context())
			if err != nil {
				t.Error(err)
			}
			toks[i] = tok
		})
	}
	wg.Wait()
	for _, tok := range toks {
		if tok != toks[0] {
			t.Fatalf("concurrent Token() calls returned different tokens")
		}
	}
	if n := cc.calls.Load(); n != 1 {
		t.Errorf("credentials retrieved %d times, want 1", n)
	}
}

func TestTokenErrorsHideSecrets(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clk := newClock(t0)
	cc := staticCreds()
	p := New(Options{UserID: "u", CacheName: "c", Region: "us-east-1", Credentials: cc, Now: clk.Now})
	tok, err := p.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sig := tok[strings.Index(tok, "X-Amz-Signature=")+len("X-Amz-Signature="):]

	// The provider fails with an error that quotes a presigned URL.
	cc.err = errors.New("refresh failed for " + "http://" + tok)
	clk.Add(11 * time.Minute)
	_, err = p.Token(ctx)
	if err == nil {
		t.Fatal("Token() with failing credentials: want an error")
	}
	for _, secret := range []string{tok, sig, testSecret} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q contains a secret", err)
		}
	}
	for _, s := range []string{p.String(), p.GoString(), fmt.Sprintf("%v %+v %#v %s", p, p, p, p)} {
		if strings.Contains(s, sig) || strings.Contains(s, testSecret) {
			t.Errorf("Provider prints a secret: %s", s)
		}
	}

	missing := map[string]Options{
		"iamauth: no user id":                  {CacheName: "c", Region: "r", Credentials: cc},
		"iamauth: no cache name":               {UserID: "u", Region: "r", Credentials: cc},
		"iamauth: no region":                   {UserID: "u", CacheName: "c", Credentials: cc},
		"iamauth: no AWS credentials provider": {UserID: "u", CacheName: "c", Region: "r"},
	}
	for want, o := range missing {
		if _, err := New(o).Token(ctx); err == nil || err.Error() != want {
			t.Errorf("Token(%+v) error = %v, want %q", o, err, want)
		}
	}
	if _, err := New(Options{UserID: "u", CacheName: "bad host/\x7f", Region: "r", Credentials: cc}).Token(ctx); err == nil {
		t.Errorf("Token with an invalid cache name: want an error")
	}
}

func TestFromEnv(t *testing.T) {
	t.Parallel()
	full := map[string]string{
		"AWS_ACCESS_KEY_ID": testKey, "AWS_SECRET_ACCESS_KEY": testSecret, "AWS_SESSION_TOKEN": testSession,
		"AWS_REGION": "ap-south-1",
	}
	getenv := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	p, err := FromEnv(getenv(full), Options{UserID: "u", CacheName: "c", Now: newClock(t0).Now})
	if err != nil {
		t.Fatalf("FromEnv error = %v", err)
	}
	tok, err := p.Token(t.Context())
	if err != nil || !strings.Contains(tok, "X-Amz-Credential="+testKey+"%2F20240301%2Fap-south-1%2Felasticache%2Faws4_request") ||
		!strings.Contains(tok, "X-Amz-Security-Token="+url.QueryEscape(testSession)) {
		t.Errorf("FromEnv token = %q, %v", tok, err)
	}

	for drop, want := range map[string]string{
		"AWS_ACCESS_KEY_ID":     "iamauth: AWS_ACCESS_KEY_ID is not set",
		"AWS_SECRET_ACCESS_KEY": "iamauth: AWS_SECRET_ACCESS_KEY is not set",
		"AWS_REGION":            "iamauth: AWS_REGION is not set",
	} {
		m := map[string]string{}
		for k, v := range full {
			if k != drop {
				m[k] = v
			}
		}
		if _, err := FromEnv(getenv(m), Options{UserID: "u", CacheName: "c"}); err == nil || err.Error() != want {
			t.Errorf("FromEnv without %s error = %v, want %q", drop, err, want)
		}
	}
	m := map[string]string{"AWS_ACCESS_KEY_ID": testKey, "AWS_SECRET_ACCESS_KEY": testSecret, "AWS_DEFAULT_REGION": "eu-north-1"}
	if p, err := FromEnv(getenv(m), Options{UserID: "u", CacheName: "c"}); err != nil || p.opts.Region != "eu-north-1" {
		t.Errorf("FromEnv with AWS_DEFAULT_REGION = %v, %v", p, err)
	}
	if _, err := FromEnv(getenv(full), Options{CacheName: "c"}); err == nil || err.Error() != "iamauth: no user id" {
		t.Errorf("FromEnv without a user id error = %v", err)
	}
	if _, err := FromEnv(nil, Options{UserID: "u", CacheName: "c"}); err == nil {
		t.Errorf("FromEnv(nil getenv) = nil error")
	}
}
