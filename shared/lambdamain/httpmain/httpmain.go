// Package httpmain is the composition root of the HTTP Lambda functions:
// functions/<route>/main.go, written by make generate, calls Serve with its
// own route variable (httpapi.CreateJobRoute) and that path's Allow header.
// Handed the route itself rather than its name, a bootstrap links that
// route's handler alone: the route table, the other handlers and what only
// they use (the OpenAPI document, the dashboard page, other store methods)
// stay out of it. The sweepers (package lambdamain) do not import this
// package, so they link no HTTP layer at all.
//
// Everything else is lambdamain's: the configuration, the logger, the Redis
// client and store, and the report of an init failure.
package httpmain

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/ocyless/ocyless/shared/httpapi"
	"github.com/ocyless/ocyless/shared/lambdahttp"
	"github.com/ocyless/ocyless/shared/lambdamain"
	"github.com/ocyless/ocyless/shared/redisstore"
)

// The handler takes the raw event bytes, so lambda.Start does no JSON
// decoding of its own (any payload reaches it).
var _ lambda.Handler = (*lambdahttp.Handler)(nil)

// Serve runs the Lambda function serving route, one of httpapi's route
// variables, for API Gateway events of payload format 2.0 or 1.0 and the
// load balancer's; allow is httpapi.Allow(route.Pattern), the methods of a
// 405 on its path; wraps, if any, wrap its handler (wake.Wrap, for the
// functions that wake the push dispatcher). It never returns.
func Serve(route httpapi.Route, allow string, wraps ...Wrap) {
	log := lambdamain.NewLogger()
	h, err := NewHandler(os.LookupEnv, route, allow, log, wraps...)
	if err != nil {
		lambdamain.FailInit(log, err)
	}
	lambda.Start(h)
}

// NewHandler builds the Lambda handler of route: configuration from getenv,
// the store, httpapi's handler of that route alone and the API Gateway
// adapter, with wraps applied in order around the handler. A nil log
// discards logs.
func NewHandler(getenv func(string) (string, bool), route httpapi.Route, allow string, log *slog.Logger, wraps ...Wrap) (*lambdahttp.Handler, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg, store, err := lambdamain.Setup(getenv, log)
	if err != nil {
		return nil, err
	}
	// A route that never touches the store does not reach for Redis (its
	// function has no network path to it).
	needsStore := httpapi.NeedsStore(route.Name)
	if needsStore {
		info, _, err := lambdamain.OpenStore(store, cfg, log)
		if err != nil {
			return nil, err
		}
		if info.Upgrade {
			return nil, fmt.Errorf("namespace %q has layout version %d and its upgrade to this version's is unfinished: the sweepers are upgrading it (or run make migrate); this function starts once that is done", cfg.Redis.KeyNamespace, info.Layout)
		}
	}
	opts := httpapi.ConfigOptions(cfg.Server)
	opts.Logger = log
	if opts.PushPolicy, err = lambdamain.PushPolicy(getenv, cfg); err != nil {
		return nil, err
	}
	api := httpapi.New(store, opts)
	h, err := api.SingleHandler(route, allow)
	if err != nil {
		return nil, fmt.Errorf("route %q: %w", route.Name, err)
	}
	if needsStore {
		// A layout not checked at init (Redis unreachable then) is checked
		// at each request until it is: an unfinished upgrade gets a 503.
		h = api.Gate(h, store.Servable)
	}
	for _, wrap := range wraps {
		if h, err = wrap(getenv, store, h, log); err != nil {
			return nil, err
		}
	}
	return lambdahttp.New(h, log), nil
}

// Wrap adds to a function's handler h what its own main asks for, from the
// same environment, store and logger (wake.Wrap: waking the push
// dispatcher). A package that only some functions need is linked by those
// alone this way.
type Wrap func(getenv func(string) (string, bool), store *redisstore.Store, h http.Handler, log *slog.Logger) (http.Handler, error)
