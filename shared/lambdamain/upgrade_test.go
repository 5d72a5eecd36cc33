package lambdamain_test

import (
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/redis/go-redis/v9"

	"github.com/ocyless/ocyless/shared/httpapi"
	"github.com/ocyless/ocyless/shared/lambdamain"
	"github.com/ocyless/ocyless/shared/lambdamain/httpmain"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/redisstore/upgradetest"
	"github.com/ocyless/ocyless/shared/redistest"
	"github.com/ocyless/ocyless/shared/sweep"
)

// layoutOf is the namespace's recorded layout version ("" for none).
func layoutOf(t *testing.T, rdb redis.UniversalClient, ns string) string {
	return rdb.HGet(t.Context(), "{"+ns+"}:meta", "version").Val()
}

// TestSweeperUpgradeAfterKill: a sweeper started while a killed upgrader's
// lock is held waits within its budget, takes over once the lease lapses,
// finishes the upgrade and only then sweeps; with a budget spent while it
// waits, it neither sweeps nor fails.
func TestSweeperUpgradeAfterKill(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	for _, tt := range []struct {
		name   string
		lease  time.Duration
		budget string
		want   string // layout version after the run
	}{
		{"takes over", 1500 * time.Millisecond, "30s", "4"},
		{"budget spent waiting", time.Minute, "1s", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ns := redistest.Namespace(t)
			upgradetest.HalfUpgraded(t, srv.Client(), ns, tt.lease)
			h, err := lambdamain.NewSweepHandler(env(map[string]string{"OCYPOD_REDIS_URL": srv.URL(),
				"OCYPOD_KEY_NAMESPACE": ns, "OCYPOD_SWEEP_BUDGET": tt.budget}), sweep.Expiry, nil)
			if err != nil {
				t.Fatal(err)
			}
			h.Metrics = io.Discard
			s, err := h.Run(t.Context(), []byte(`{}`))
			if err != nil {
				t.Fatalf("Run = %v", err)
			}
			if got := layoutOf(t, srv.Client(), ns); got != tt.want {
				t.Errorf("layout version after the run = %q, want %q", got, tt.want)
			}
			if tt.want == "" && s.Batches != 0 {
				t.Errorf("the sweeper swept a namespace whose upgrade is unfinished: %+v", s)
			}
		})
	}
}

// TestHTTPFunctionUnfinishedUpgrade: an HTTP function refuses to start
// on a namespace whose upgrade is unfinished; one that started while Redis
// was unreachable answers 503 until the upgrade finishes, then serves.
func TestHTTPFunctionUnfinishedUpgrade(t *testing.T) {
	t.Parallel()
	srv, err := redistest.StartServer(redistest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ns := redistest.Namespace(t)
	e := env(map[string]string{"OCYPOD_REDIS_URL": srv.URL(), "OCYPOD_KEY_NAMESPACE": ns})
	upgradetest.HalfUpgraded(t, srv.Client(), ns, 0)
	if _, err := httpmain.NewHandler(e, httpapi.CreateJobRoute, httpapi.Allow(httpapi.CreateJobRoute.Pattern), nil); err == nil || !strings.Contains(err.Error(), "unfinished") {
		t.Errorf("httpmain.NewHandler on an unfinished upgrade = %v, want an init error", err)
	}

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	h, err := httpmain.NewHandler(e, httpapi.CreateJobRoute, httpapi.Allow(httpapi.CreateJobRoute.Pattern), nil)
	if err != nil {
		t.Fatalf("httpmain.NewHandler with Redis unreachable = %v", err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	upgradetest.HalfUpgraded(t, srv.Client(), ns, 0)
	create := func() events.APIGatewayV2HTTPResponse {
		return h.ServeV2(t.Context(), events.APIGatewayV2HTTPRequest{Version: "2.0", RawPath: "/queue/mail/job",
			Body: `{"input":"new"}`, Headers: map[string]string{"content-type": "application/json"},
			PathParameters: map[string]string{"name": "mail"},
			RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: "POST", Path: "/queue/mail/job"}}})
	}
	if r := create(); r.StatusCode != 503 || !strings.Contains(r.Body, "upgraded") {
		t.Errorf("create during the upgrade = %d %s, want a 503", r.StatusCode, r.Body)
	}
	s, err := redisstore.New(srv.Client(), redisstore.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	if done, err := s.Upgrade(t.Context(), 0); !done || err != nil {
		t.Fatalf("Upgrade = %v, %v", done, err)
	}
	r := create()
	if id, err := strconv.ParseUint(r.Body, 10, 64); r.StatusCode != 201 || err != nil || id <= 15 {
		t.Errorf("create after the upgrade = %d %s, want an id above version 1's 15", r.StatusCode, r.Body)
	}
}
