// Package lambdamain is the composition root of the sweepers
// (sweeper/<task>/main.go calls Sweep) and holds what every Lambda function
// shares; the HTTP functions' root is package httpmain
// (functions/<route>/main.go calls httpmain.Serve). lambdamain imports no
// HTTP package, so a sweeper links no HTTP layer.
//
// Both build their dependencies once per execution environment, at init:
// configuration from OCYPOD_* variables (config.FromEnv), a slog logger in
// Lambda's format (lambdacontext.NewLogHandler, honouring the function's
// LoggingConfig), a small Redis pool (2 connections per concurrent
// invocation, short timeouts, ElastiCache IAM tokens when
// OCYPOD_REDIS_IAM_USER is set) and the store. The client does not dial
// at init; the first invocation does.
//
// An init failure is logged, reported to the Lambda Runtime API as an init
// error, and ends the process with status 1. Its text goes through
// ocypod.RedactSecrets, so no password or token reaches a log.
//
// The pieces are plain functions taking their dependencies (Setup,
// OpenStore, NewSweepHandler, httpmain.NewHandler, SweepBudget,
// ReportInitError), so tests drive them
// without a Lambda runtime; the end-to-end tests in this package build the
// real bootstraps and run them against a fake Runtime API and a real Redis.
package lambdamain
