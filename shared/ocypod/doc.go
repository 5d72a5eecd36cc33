// Package ocypod holds the domain of the Ocypod-compatible job queue: jobs,
// queue settings, the six statuses and their transition table, Ocypod's
// duration grammar and output format, name validation, wire timestamps and the
// error kinds every other package speaks. It does no I/O.
//
// The behaviour matches Ocypod 0.8.0 (see the README's compatibility notes);
// where upstream had bugs, the fixed behaviour is documented next to the code.
package ocypod
