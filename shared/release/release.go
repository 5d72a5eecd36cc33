// Package release names this build of ocyless: its version, as in
// CHANGELOG.md's newest released section. The binaries print it next to the
// Ocypod API version they speak (GET /info/version keeps answering Ocypod's
// "0.8.0", as Ocypod clients expect).
package release

// Version is the product's version (semantic versioning). Raise it together
// with a new section of CHANGELOG.md; a test keeps the two in step.
const Version = "0.3.0"
