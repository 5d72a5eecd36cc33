// Package reliability holds the fault and concurrency tests of the whole
// store: two store instances on one Redis under 50 workers while the sweeps
// overlap, crashed workers, Redis going away and coming back, Redis hung
// under concurrent requests (and what a 503 may have applied), and a Redis
// restart with AOF. It has no code of its own; see the *_test.go files and
// the README's "Delivery guarantee" section.
package reliability
