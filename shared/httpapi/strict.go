package httpapi

import (
	"net/http"
	"slices"

	"github.com/ocyless/ocyless/shared/ocypod"
	"github.com/ocyless/ocyless/shared/wire"
)

// Unknown input (api-v3 §12). Ocypod ignored unknown body keys and query
// parameters, and its clients may rely on that: a pure Ocypod request keeps
// that silence unless Options.StrictInput. Everything else refuses them,
// so a misspelt field is an answer, not a default: a route Ocypod does not
// have, and a request to one of Ocypod's routes that uses any extension
// body key or query parameter. Nested objects belong to extension fields,
// so their unknown keys are always refused ("Unknown field: error.x").

// routeParams lists each route's query parameters: Ocypod's own first,
// then the extension's. A route not listed takes none.
var routeParams = map[string]struct{ ocypod, ext []string }{
	"get-job":         {ocypod: []string{"fields"}, ext: []string{"wait"}},
	"create-job":      {ext: []string{"wait", "fields"}},
	"heartbeat":       {ext: []string{"attempt"}},
	"set-job-output":  {ext: []string{"attempt"}},
	"update-job":      {ext: []string{"attempt", "take", "count", "worker", "wait"}},
	"next-job":        {ext: []string{"wait", "count", "worker"}},
	"take-jobs":       {ext: []string{"queues", "order", "wait", "count", "worker"}},
	"list-jobs":       {ext: listParams},
	"update-jobs":     {ext: []string{"take", "count", "worker", "wait"}},
	"list-queue-jobs": {ext: append(slices.Clone(listParams), "key")},
	"failure-jobs":    {ext: []string{"limit", "cursor", "fields"}},
	"retry-failures":  {ext: []string{"limit"}},
	"queue-stats":     {ext: []string{"date", "by"}},
}

var listParams = []string{"status", "tag", "worker", "tracked", "fields", "limit", "cursor"}

// ocypodRoutes are the routes of Ocypod 0.8, the table's first 19 (a test
// keeps the two lists equal).
var ocypodRoutes = map[string]bool{
	"health": true, "info": true, "version": true, "tag-jobs": true, "job-status": true,
	"get-job-output": true, "set-job-output": true, "heartbeat": true, "get-job": true,
	"update-job": true, "delete-job": true, "queue-job-ids": true, "next-job": true,
	"create-job": true, "queue-size": true, "get-queue": true, "put-queue": true,
	"delete-queue": true, "list-queues": true,
}

// inputRules is what a request's query says about unknown input.
type inputRules struct {
	strict  bool   // refuse unknown body keys: an extension route or request, or StrictInput
	unknown string // the first query parameter the route does not take ("" if none)
}

// checkQuery reads a request's query parameters against its route's
// list: an unknown one is refused at once where input is strict; on an
// Ocypod route without extension parameters it is remembered, for a body
// that turns out to use an extension field (requestUsesExtension).
func (a *API) checkQuery(route string, r *http.Request) (inputRules, error) {
	ext := !ocypodRoutes[route]
	rules := inputRules{strict: ext || a.opts.StrictInput}
	if r.URL.RawQuery == "" {
		return rules, nil
	}
	known := routeParams[route]
	for _, key := range wire.ParseQuery(r.URL.RawQuery).Keys() {
		switch {
		case slices.Contains(known.ext, key):
			rules.strict = true
		case slices.Contains(known.ocypod, key):
		case rules.unknown == "":
			rules.unknown = key
		}
	}
	if rules.strict && rules.unknown != "" {
		return rules, unknownParameter(rules.unknown)
	}
	return rules, nil
}

// usesExtension marks a request to an Ocypod route whose body used an
// extension field: from then on its input is strict, the query included.
func (rules *inputRules) usesExtension() error {
	rules.strict = true
	if rules.unknown != "" {
		return unknownParameter(rules.unknown)
	}
	return nil
}

func unknownParameter(name string) error { return ocypod.Invalid("Unknown parameter: " + name) }

func unknownField(name string) error { return ocypod.Invalid("Unknown field: " + name) }

// refuseUnknown refuses obj's first key that known lacks, named with prefix
// ("" at the top level, "retry_backoff." inside it).
func refuseUnknown(obj *wire.Value, known []string, prefix string) error {
	if obj.Kind != wire.Object {
		return nil // the caller's type check answers
	}
	if key, ok := wire.UnknownKey(obj, known); ok {
		return unknownField(prefix + key)
	}
	return nil
}

// hasAny reports whether obj (an object) has one of keys.
func hasAny(obj *wire.Value, keys []string) bool {
	if obj.Kind != wire.Object {
		return false
	}
	for i := range obj.Members {
		if slices.Contains(keys, obj.Members[i].Key) {
			return true
		}
	}
	return false
}
