# ocyless: an Ocypod-compatible job queue, serverless on AWS or local with `make run`.
.DEFAULT_GOAL := help
SHELL := /bin/bash

GO       ?= go
CONFIG   ?=
PKGS     := ./...

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_%-]+:.*## / {printf "  %-22s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: run
run: ## run the all-in-one local server on 127.0.0.1:8023 (CONFIG=path/to/ocypod.toml)
	$(GO) run ./cmd/ocypod-local $(CONFIG)

.PHONY: test
test: lint ## vet, staticcheck, gofmt and every test with the race detector
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

.PHONY: lint
lint: ## gofmt, go vet, staticcheck, go mod tidy check
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) tool staticcheck $(PKGS)
	$(GO) mod tidy -diff

.PHONY: bench
bench: ## benchmarks (one run, private redis-server); see docs/benchmarks.md
	$(GO) test -run '^$$' -bench . -benchmem -count=1 $(PKGS)
