// Package push delivers a queue's jobs to workers that are HTTP endpoints
// or Lambda functions (the contract's push delivery and callbacks).
//
// It is the delivery engine alone, with no Redis: the store takes due jobs
// with worker "push" and hands them over as a Delivery; Deliverer.Deliver
// sends it (a signed POST, or a synchronous Lambda invocation) and returns
// one Outcome per job (completed with an output, failed with an error group
// and an optional Retry-After time, or timed out); Engine bounds deliveries
// in flight per queue, keeps a job out of two deliveries at once, and hands
// the outcomes to a Reporter (the store). SendCallback posts a job's
// ending to its callback URL under the same rules; CallbackBackoff is the
// retry schedule.
//
// The settings live here too: Target (the queue setting `push`) and
// Callback (`callback`), decoded with the contract's error texts, shown
// with the secret as "set". Policy is `[push] allowed_hosts` plus the
// rules no setting lifts (link-local and cloud metadata addresses refused,
// also after DNS resolution; no redirects; no proxy). Sign and Verify are
// the Ocyless-Signature scheme, for senders and receivers.
//
// Lambda targets are invoked through a LambdaInvoker, whose AWS SDK
// implementation is package awslambda: this package links no AWS SDK, so
// the HTTP functions that import it for the settings and the policy do not
// link the Lambda client.
//
// A secret never appears in an error text, a log line or a public view:
// Secret prints as "set" whatever the verb or handler.
package push
