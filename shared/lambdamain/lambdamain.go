package lambdamain

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/redisstore"
	"github.com/ocyless/ocyless/shared/sweep"
)

// The handler takes the raw event bytes, so lambda.Start does no JSON
// decoding of its own (any payload reaches it).
var _ lambda.Handler = (*SweepHandler)(nil)

// Sweep runs the scheduled Lambda function doing the sweep kind. It never
// returns.
func Sweep(kind sweep.Kind) {
	log := NewLogger()
	h, err := NewSweepHandler(os.LookupEnv, kind, log)
	if err != nil {
		FailInit(log, err)
	}
	lambda.Start(h)
}

// NewLogger returns the functions' logger: Lambda's slog handler, which
// writes to stdout as text or, with LoggingConfig LogFormat JSON, as JSON,
// filters by AWS_LAMBDA_LOG_LEVEL and adds the request id.
// go-redis's own lines (dial failures) are routed to it too.
func NewLogger() *slog.Logger {
	log := slog.New(lambdacontext.NewLogHandler())
	redisstore.RouteLogs(log)
	return log
}

// FailInit reports an init failure and exits: logged, posted to the Runtime
// API (so Lambda reports Runtime.InitError with our message rather than a
// bare exit status), and exit status 1.
func FailInit(log *slog.Logger, err error) {
	msg := ocypod.RedactSecrets(err.Error())
	log.Error("init failed", slog.String("error", msg))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if rerr := ReportInitError(ctx, nil, os.Getenv("AWS_LAMBDA_RUNTIME_API"), msg); rerr != nil {
		log.Error("reporting the init error failed", slog.String("error", rerr.Error()))
	}
	os.Exit(1)
}
