package lambdamain_test

import (
	"strings"
	"testing"

	"github.com/ocyless/ocyless/shared/httpapi"
	"github.com/ocyless/ocyless/shared/lambdamain"
	"github.com/ocyless/ocyless/shared/lambdamain/httpmain"
	"github.com/ocyless/ocyless/shared/lambdamain/wake"
	"github.com/ocyless/ocyless/shared/sweep"
)

// env is a getenv over a map.
func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// TestNewHandlersAtInit: building a handler reads the configuration and
// the credentials but never dials Redis, so an unreachable address is fine
// at init; configuration mistakes are errors without secrets.
func TestNewHandlersAtInit(t *testing.T) {
	t.Parallel()
	unreachable := "redis://127.0.0.1:1"
	tests := []struct {
		name    string
		env     map[string]string
		route   string
		wantErr string // "" for success
	}{
		{"http", map[string]string{"OCYPOD_REDIS_URL": unreachable}, "create-job", ""},
		{"unknown route", map[string]string{"OCYPOD_REDIS_URL": unreachable}, "no-such-route", "no-such-route"},
		{"no redis url", map[string]string{}, "health", "OCYPOD_REDIS_URL"},
		{"bad namespace", map[string]string{"OCYPOD_REDIS_URL": unreachable, "OCYPOD_KEY_NAMESPACE": "a b"}, "health", "OCYPOD_KEY_NAMESPACE"},
		{"bad url keeps its secret", map[string]string{"OCYPOD_REDIS_URL": "redis://u:hunter2@host:port"}, "health", "OCYPOD_REDIS_URL"},
		{"iam without aws credentials", map[string]string{
			"OCYPOD_REDIS_URL": "rediss://cache.example:6379", "OCYPOD_REDIS_IAM_USER": "ocy", "OCYPOD_REDIS_CACHE_NAME": "c",
			"AWS_REGION": "eu-west-1"}, "health", "AWS_ACCESS_KEY_ID"},
		{"iam", map[string]string{
			"OCYPOD_REDIS_URL": "rediss://cache.example:6379", "OCYPOD_REDIS_IAM_USER": "ocy", "OCYPOD_REDIS_CACHE_NAME": "c",
			"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "s3cr3t", "AWS_SESSION_TOKEN": "tok"}, "health", ""},
		{"wakes the dispatcher", map[string]string{"OCYPOD_REDIS_URL": unreachable, "OCYPOD_PUSH_DISPATCHER": "d",
			"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "s3cr3t"}, "create-job", ""},
		{"wakes the dispatcher without a region", map[string]string{"OCYPOD_REDIS_URL": unreachable, "OCYPOD_PUSH_DISPATCHER": "d",
			"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "s3cr3t"}, "create-job", "AWS_REGION"},
		{"bad push allowed hosts", map[string]string{"OCYPOD_REDIS_URL": unreachable, "OCYPOD_PUSH_ALLOWED_HOSTS": "169.254.169.254"}, "put-queue", "allowed_hosts"},
	}
	for _, tt := range tests {
		route := httpapi.Route{Name: tt.route} // not a route variable: no handler
		for _, rt := range httpapi.Routes() {
			if rt.Name == tt.route {
				route = rt
			}
		}
		var wraps []httpmain.Wrap
		if _, ok := tt.env[wake.EnvDispatcher]; ok {
			wraps = append(wraps, wake.Wrap)
		}
		_, err := httpmain.NewHandler(env(tt.env), route, httpapi.Allow(route.Pattern), nil, wraps...)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: httpmain.NewHandler = %v, want nil", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: httpmain.NewHandler = %v, want an error mentioning %s", tt.name, err, tt.wantErr)
		case err != nil && (strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "s3cr3t")):
			t.Errorf("%s: error %q leaks a secret", tt.name, err)
		}
	}
	h, err := lambdamain.NewSweepHandler(env(map[string]string{"OCYPOD_REDIS_URL": unreachable, "OCYPOD_SWEEP_BUDGET": "30s"}), sweep.Retries, nil)
	if err != nil || h.Budget.Seconds() != 30 || h.Kind != sweep.Retries || h.Margin <= 0 {
		t.Errorf("NewSweepHandler = %+v, %v; want retries with a 30s budget and a margin", h, err)
	}
	if _, err := lambdamain.NewSweepHandler(env(map[string]string{"OCYPOD_REDIS_URL": unreachable}), "bogus", nil); err == nil {
		t.Error("NewSweepHandler(bogus) = nil error")
	}
}
