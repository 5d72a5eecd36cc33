// Package oapiclient is the client oapi-codegen (the most used Go OpenAPI
// generator, default options) generates from shared/httpapi/openapi.json:
// `make generate` writes client.gen.go, and the tests check that the file
// is what the generator makes of today's document and that a job's life
// runs through it against the real server. Users generate their own; this
// one exists to keep the document usable by generators.
package oapiclient

//go:generate go tool oapi-codegen -generate types,client -package oapiclient -o client.gen.go ../../../shared/httpapi/openapi.json
