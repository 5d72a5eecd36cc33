// Package httpapi serves Ocypod 0.8.0's HTTP/JSON API, and the extended
// job model of api-v2 on top of it, over a Store: the route table
// (routes.go), the handlers grouped by resource (jobs, update, takes,
// queues, listing, failures, workers, stats, schedules, info), the request
// decoding with Ocypod's checks and texts (decode*.go, values.go,
// params.go), and the one mapping from errors to status codes (errors.go).
// The wire format itself (router, JSON reader and writer, framework error
// texts) is package wire.
//
// Handler serves every route (the local server); SingleHandler serves one
// route variable alone (one Lambda function each, linking that handler
// only), RouteHandler one route by name. Each endpoint is an API method taking
// the usual (w, r) that writes its success response and returns any failure
// as an error, unwritten; the router answers a returned error with
// writeError, the one place errors become responses. Handlers read path
// parameters with r.PathValue, which the router sets, or which an adapter
// may set beforehand from API Gateway's own match.
//
// A request that uses no extension gets Ocypod's answer byte for byte
// (TestOcypodReplay). Extension fields and parameters answer a refusal as
// 400 "Invalid <field>: <why>"; Ocypod's own fields keep serde's texts.
//
// # Deliberate differences from upstream Ocypod 0.8.0
//
// Everything a client relies on is kept: routes, JSON shapes and key orders,
// status codes and error texts. These differences are deliberate:
//
//   - Error bodies are served as "text/plain; charset=utf-8" (upstream said
//     text/html for application errors and sent no Content-Type for
//     "Unrecognised field").
//   - Status lines carry the standard reason phrases ("204 No Content", not
//     "Heartbeat updated"); net/http cannot set custom ones.
//   - /info, /info/version, /queue, /queue/{name}/size,
//     /queue/{name}/job_ids and /job/{id}/status answer GET only; upstream
//     answered any method. Other methods get 405 with Allow.
//   - The JSON body limit defaults to 256 KiB (upstream: 1024 bytes).
//   - An invalid queue name is a 400 even when Redis is down (upstream
//     validated names after acquiring a connection and answered 503).
//   - Job input and output keep every number's literal text (upstream turned
//     numbers outside the i64/u64 range into floats, e.g. 1e2 into 100.0);
//     object keys are still sorted and duplicate keys keep the last value.
//   - JSON parse errors use serde_json's wording and line/column rules, but
//     not every case is byte-identical (for example a status that is not a
//     string reads "invalid type: integer `1`, expected a status string").
//     Bodies with invalid UTF-8 are refused wherever the bad byte is.
//     Durations may contain JSON escapes; request bodies must be objects
//     (serde also accepted positional arrays).
//   - Empty-string tags are refused at creation with 400 "tags cannot be
//     empty" (upstream accepted them, then failed every delete and expiry of
//     the job).
//   - PATCH /job/{id} with no status and no output answers 404 for a missing
//     job (upstream: 204).
//   - GET /health answers 503 with {"status":"unhealthy","error":"..."} when
//     Redis fails (upstream: a text 503 when no connection could be made, a
//     200 "unhealthy" JSON for a failed PING).
//   - A 500 carries the generic text "Internal server error"; the cause is
//     logged, never echoed (upstream echoed raw Redis error texts).
//   - Queue names and tags are limited to 1024 bytes (ocypod.MaxNameLength),
//     a job to 64 tags (ocypod.MaxTags).
//   - ?fields= names each field once (upstream repeated a repeated name),
//     and the paths of the extension's routes, unknown to upstream, are
//     served (PATCH /queue/{name} among them, so that path's Allow grows).
//
// Two more are the store's rules, visible on the wire: a job created without
// retry_delays inherits its queue's (upstream's did not), and
// GET /queue/{name}/job_ids answers 404 for a queue that does not exist
// (upstream answered 200 with whatever jobs were left), listing queued jobs
// in the order they will be taken (upstream: newest first).
package httpapi
