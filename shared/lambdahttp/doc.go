// Package lambdahttp serves an http.Handler to API Gateway through Lambda.
//
// One Handler accepts both proxy payload formats, telling them apart by the
// event's "version" field: HTTP API payload 2.0 (the deployed shape, see
// template.yaml) and REST API / HTTP API payload 1.0. The conversion itself is
// aws-lambda-go-api-proxy's (httpadapter.NewV2 and httpadapter.New); this
// package is the thin layer that fixes its known pitfalls (see
// ../reference/serverless.md §2):
//
//   - API Gateway delivers the path percent-decoded, and the proxy pastes it
//     into a URL unescaped, so "a b", "50%" or "a?b" broke parsing or routing.
//     The path is re-escaped segment by segment before conversion.
//   - The proxy ignores pathParameters. When the event has them they are set
//     on the request with SetPathValue, so r.PathValue returns API Gateway's
//     decoded value even where the path alone is ambiguous (a decoded "%2F").
//   - The proxy splits every payload 2.0 header on commas; here each header
//     keeps the one value API Gateway sent, as net/http would.
//   - A handler that writes nothing gets a 200 (net/http's behaviour), not the
//     proxy's 504, so it answers as it would on the local server (the route
//     table's router answers a silent route 500 itself, on both paths); a
//     panicking handler gets a 500 while the execution environment stays warm.
//   - A named HTTP API stage is stripped from the path, so routes match with
//     or without the $default stage.
//
// Base64 bodies, cookies, repeated query keys and multi-value response headers
// go through the proxy unchanged.
package lambdahttp
