// Package iamauth produces ElastiCache IAM authentication tokens: SigV4
// presigned "connect" requests that serve as the Redis AUTH password of an
// IAM-enabled ElastiCache user.
//
// A token is valid for 15 minutes; connections authenticated with it stay
// open after that. The Provider signs one token, reuses it for every new
// connection for RefreshAfter (10 minutes by default), then signs the next
// one. Signing is local: no network call is made.
//
// Tokens are credentials. They never appear in this package's error texts,
// and a Provider prints without its token.
package iamauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/ocyless/ocyless/shared/ocypod"
)

const (
	// TokenLifetime is how long ElastiCache accepts a token (X-Amz-Expires).
	TokenLifetime = 15 * time.Minute
	// DefaultRefreshAfter is how long a token is reused before a new one is
	// signed, leaving five minutes of validity for a connection handshake.
	DefaultRefreshAfter = 10 * time.Minute

	service = "elasticache"
	// emptySHA256 is the hex SHA-256 of an empty payload.
	emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	// credentialMargin is how long before the AWS credentials expire a
	// token signed with them is replaced.
	credentialMargin = time.Minute
)

// Options configure a Provider.
type Options struct {
	// UserID is the ElastiCache user id, which for IAM users must equal the
	// user name. It is also the Redis user name.
	UserID string
	// CacheName is the replication group id or the serverless cache name.
	// It is lower-cased, as ElastiCache requires.
	CacheName string
	// Region is the cache's AWS region, e.g. "eu-west-1".
	Region string
	// Serverless selects ElastiCache Serverless (ResourceType=ServerlessCache).
	Serverless bool
	// Credentials signs the tokens; see FromEnv for Lambda's.
	Credentials aws.CredentialsProvider
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// RefreshAfter is how long a token is reused; 0 means
	// DefaultRefreshAfter. Values above TokenLifetime are capped to it.
	RefreshAfter time.Duration
}

// Provider signs and caches tokens. It is safe for concurrent use.
type Provider struct {
	opts   Options
	signer *v4.Signer

	mu       sync.Mutex
	token    string
	refresh  time.Time // sign a new token at or after this instant
	signedAt time.Time
}

// New returns a Provider for o. Missing options are reported by Token.
func New(o Options) *Provider {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RefreshAfter <= 0 {
		o.RefreshAfter = DefaultRefreshAfter
	}
	if o.RefreshAfter > TokenLifetime {
		o.RefreshAfter = TokenLifetime
	}
	return &Provider{opts: o, signer: v4.NewSigner()}
}

// FromEnv returns a Provider whose credentials and region come from the
// variables Lambda sets for the execution role: AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN and AWS_REGION (or
// AWS_DEFAULT_REGION). Credentials and Region already set in o are kept.
// It fails, naming the variable, when one is missing. It deliberately does
// not use the SDK's config.LoadDefaultConfig, which adds 2.5 MB to a binary.
func FromEnv(getenv func(string) (string, bool), o Options) (*Provider, error) {
	get := func(k string) string {
		if getenv == nil {
			return ""
		}
		v, _ := getenv(k)
		return v
	}
	if o.Region == "" {
		o.Region = get("AWS_REGION")
	}
	if o.Region == "" {
		o.Region = get("AWS_DEFAULT_REGION")
	}
	if o.Region == "" {
		return nil, errors.New("iamauth: AWS_REGION is not set")
	}
	if o.Credentials == nil {
		key, secret := get("AWS_ACCESS_KEY_ID"), get("AWS_SECRET_ACCESS_KEY")
		switch {
		case key == "":
			return nil, errors.New("iamauth: AWS_ACCESS_KEY_ID is not set")
		case secret == "":
			return nil, errors.New("iamauth: AWS_SECRET_ACCESS_KEY is not set")
		}
		o.Credentials = credentials.NewStaticCredentialsProvider(key, secret, get("AWS_SESSION_TOKEN"))
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	return New(o), nil
}

func (o Options) validate() error {
	switch {
	case o.UserID == "":
		return errors.New("iamauth: no user id")
	case o.CacheName == "":
		return errors.New("iamauth: no cache name")
	case o.Region == "":
		return errors.New("iamauth: no region")
	case o.Credentials == nil:
		return errors.New("iamauth: no AWS credentials provider")
	}
	return nil
}

// Token returns a valid token, signing a new one when the cached one is
// older than RefreshAfter (or its AWS credentials are about to expire).
func (p *Provider) Token(ctx context.Context) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.opts.Now()
	if p.token != "" && now.Before(p.refresh) && !now.Before(p.signedAt) {
		return p.token, nil
	}
	tok, refresh, err := p.sign(ctx, now)
	if err != nil {
		return "", err
	}
	p.token, p.refresh, p.signedAt = tok, refresh, now
	return tok, nil
}

// Credentials returns the Redis user name and password (the token) for a
// new connection. It has the signature of redisstore.ClientOptions.Credentials
// and of go-redis's CredentialsProviderContext.
func (p *Provider) Credentials(ctx context.Context) (username, password string, err error) {
	tok, err := p.Token(ctx)
	if err != nil {
		return "", "", err
	}
	return p.opts.UserID, tok, nil
}

// String describes p without its token.
func (p *Provider) String() string {
	return fmt.Sprintf("iamauth.Provider{user=%q cache=%q region=%q serverless=%t}",
		p.opts.UserID, strings.ToLower(p.opts.CacheName), p.opts.Region, p.opts.Serverless)
}

// GoString keeps %#v from printing the cached token.
func (p *Provider) GoString() string { return p.String() }

// sign presigns GET http://<cache>/?Action=connect&User=<user>[&ResourceType=
// ServerlessCache] for the elasticache service and strips the scheme. It
// returns the token and when to replace it.
func (p *Provider) sign(ctx context.Context, now time.Time) (string, time.Time, error) {
	o := p.opts
	if err := o.validate(); err != nil {
		return "", time.Time{}, err
	}
	creds, err := o.Credentials.Retrieve(ctx)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("iamauth: retrieve AWS credentials: %s", ocypod.RedactSecrets(err.Error()))
	}
	q := url.Values{"Action": {"connect"}, "User": {o.UserID}}
	if o.Serverless {
		q.Set("ResourceType", "ServerlessCache")
	}
	q.Set("X-Amz-Expires", fmt.Sprint(int(TokenLifetime/time.Second)))
	u := url.URL{Scheme: "http", Host: strings.ToLower(o.CacheName), Path: "/", RawQuery: q.Encode()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("iamauth: invalid cache name or user id: %s", ocypod.RedactSecrets(err.Error()))
	}
	signed, _, err := p.signer.PresignHTTP(ctx, creds, req, emptySHA256, service, o.Region, now.UTC())
	if err != nil {
		return "", time.Time{}, fmt.Errorf("iamauth: sign token: %s", ocypod.RedactSecrets(err.Error()))
	}
	refresh := now.Add(o.RefreshAfter)
	if creds.CanExpire {
		if t := creds.Expires.Add(-credentialMargin); t.Before(refresh) {
			refresh = t
		}
	}
	return strings.TrimPrefix(signed, "http://"), refresh, nil
}
