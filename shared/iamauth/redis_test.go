package iamauth_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/ocyless/ocyless/shared/iamauth"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redistest"
)

// TestRedisAuthWithToken connects to a real redis-server through
// redisstore.NewClient with the provider's credentials. The ACL user's
// password is set to the exact token, so the connection only works if the
// token is what the client sends; a disabled user shows that the resulting
// error does not quote the token.
func TestRedisAuthWithToken(t *testing.T) {
	t.Parallel()
	srv, err := redistest.StartServer(redistest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()

	now := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	p := iamauth.New(iamauth.Options{
		UserID: "iam-user-01", CacheName: "my-cache", Region: "eu-west-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		Now:         func() time.Time { return now },
	})
	tok, err := p.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	admin := srv.Client()
	if err := admin.Do(ctx, "ACL", "SETUSER", "iam-user-01", "on", "resetpass", ">"+tok, "~*", "+@all").Err(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}

	client, err := redisstore.NewClient(redisstore.ClientOptions{URL: srv.URL(), Credentials: p.Credentials})
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(func() { _ = client.Close() })
	who, err := client.Do(ctx, "ACL", "WHOAMI").Text()
	if err != nil || who != "iam-user-01" {
		t.Fatalf("ACL WHOAMI = %q, %v; want iam-user-01", who, err)
	}

	// Any token is accepted by a nopass user, as on a test setup for IAM.
	if err := admin.Do(ctx, "ACL", "SETUSER", "iam-user-01", "nopass").Err(); err != nil {
		t.Fatal(err)
	}
	if err := client.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET as the IAM user: %v", err)
	}

	// A refused login: the error names the failure, never the token.
	if err := admin.Do(ctx, "ACL", "SETUSER", "iam-user-01", "off").Err(); err != nil {
		t.Fatal(err)
	}
	fresh, err := redisstore.NewClient(redisstore.ClientOptions{URL: srv.URL(), Credentials: p.Credentials})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fresh.Close() })
	err = fresh.Ping(ctx).Err()
	if err == nil {
		t.Fatal("PING as a disabled user succeeded")
	}
	sig := tok[strings.LastIndex(tok, "=")+1:]
	if strings.Contains(err.Error(), tok) || strings.Contains(err.Error(), sig) {
		t.Errorf("login error quotes the token: %v", err)
	}
}
