package lambdamain

import (
	"context"

	"github.com/ocyless/ocyless/shared/config"
	"github.com/ocyless/ocyless/shared/iamauth"
)

// iamCredentials returns the Redis credentials of ElastiCache IAM auth: the
// user id, and a token signed locally (no network call) with the execution
// role's credentials from the environment Lambda provides.
func iamCredentials(r config.Redis, getenv func(string) (string, bool)) (func(ctx context.Context) (string, string, error), error) {
	p, err := iamauth.FromEnv(getenv, iamauth.Options{
		UserID:     r.IAMUser,
		CacheName:  r.CacheName,
		Serverless: r.Serverless,
	})
	if err != nil {
		return nil, err
	}
	return p.Credentials, nil
}
