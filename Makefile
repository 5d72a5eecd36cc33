# ocyless: an Ocypod-compatible job queue, serverless on AWS or local with `make run`.
.DEFAULT_GOAL := help
SHELL := /bin/bash

GO       ?= go
CONFIG   ?=
PKGS     := ./...
FUZZTIME ?= 10s
SOAK_COUNT ?= 5
RUN_BIN  ?= bin/ocypod-local

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_%-]+:.*## / {printf "  %-22s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# `make run` builds the server, then the recipe's shell execs it: the server
# is make's own child, so the SIGTERM make forwards to its children and the
# terminal's Ctrl-C (sent to the whole foreground group) both reach it, it
# shuts down gracefully and exits 0, and make prints no error.
.PHONY: run
run: ## build and run the all-in-one local server on 127.0.0.1:8023 until Ctrl-C or SIGTERM (CONFIG=path/to/ocypod.toml)
	$(GO) build -o $(RUN_BIN) ./cmd/ocypod-local
	exec $(RUN_BIN) $(CONFIG)

.PHONY: test
test: test-deps lint ## vet, staticcheck, gofmt, every Go test with the race detector, then the clients' tests
	$(GO) test -race -count=1 -timeout 20m $(PKGS)
	$(MAKE) --no-print-directory test-clients

# The Python and TypeScript clients run their tests against the local
# server, built once. Without python3 or node a client's tests are skipped
# with a message, except under CI=true, where that fails.
.PHONY: test-clients
test-clients: ## the Python and TypeScript clients' tests against the local server (python3, node 20+)
	@mkdir -p bin && $(GO) build -o bin/ocypod-local-test ./cmd/ocypod-local
	@if command -v python3 >/dev/null 2>&1; then \
	  echo "python3 -m unittest discover -s clients/python/tests"; \
	  OCYLESS_LOCAL_BIN=$(CURDIR)/bin/ocypod-local-test python3 -m unittest discover -s clients/python/tests || exit 1; \
	elif [ "$$CI" = true ]; then echo "python3 is missing: the Python client's tests cannot run" >&2; exit 1; \
	else echo "python3 is not installed: the Python client's tests are skipped (apt-get install python3)"; fi
	@if command -v node >/dev/null 2>&1 && node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)'; then \
	  echo "node --test (clients/typescript)"; \
	  cd clients/typescript && OCYLESS_LOCAL_BIN=$(CURDIR)/bin/ocypod-local-test node --test test/*.test.js || exit 1; \
	elif [ "$$CI" = true ]; then echo "node 20 or later is missing: the TypeScript client's tests cannot run" >&2; exit 1; \
	else echo "node 20 or later is not installed: the TypeScript client's tests are skipped"; fi

# The tests start private redis-server processes. Without redis-server, stop
# before any test runs: install it as root where apt-get exists, else say how.
.PHONY: test-deps
test-deps: ## make sure redis-server is installed (as root with apt-get: install Debian's package)
	@command -v redis-server >/dev/null 2>&1 && exit 0; \
	if [ "$$EUID" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "redis-server is not installed: installing Debian's redis-server package with apt-get (the tests start their own private servers)"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq redis-server || exit 1; \
	  command -v redis-server >/dev/null 2>&1 || { echo "apt-get installed redis-server, but it is not on PATH" >&2; exit 1; }; \
	else \
	  echo "redis-server is not installed. make test starts private redis-server processes (never a Redis you already run)." >&2; \
	  echo "Install it, then run make test again:" >&2; \
	  echo "  Debian, Ubuntu:  sudo apt-get install redis-server" >&2; \
	  echo "  Fedora:          sudo dnf install redis" >&2; \
	  echo "  macOS:           brew install redis" >&2; \
	  exit 1; \
	fi

.PHONY: lint
lint: ## gofmt, go vet, staticcheck, go mod tidy check
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) tool staticcheck $(PKGS)
	$(GO) mod tidy -diff

.PHONY: fuzz
fuzz: ## run every fuzz target for FUZZTIME each (default 10s; CI runs 5s)
	FUZZTIME=$(FUZZTIME) GO=$(GO) .ci/fuzz

.PHONY: soak
soak: ## the fault and concurrency tests, repeated (SOAK_COUNT=5)
	$(GO) test -race -count=$(SOAK_COUNT) -v -run . ./shared/reliability/

.PHONY: migrate
migrate: ## upgrade a namespace written by version 1 of the store (CONFIG=path/to/ocypod.toml or OCYPOD_REDIS_URL=...)
	$(GO) run ./cmd/ocypod-local --upgrade $(CONFIG)

# `make import` copies an upstream Ocypod 0.8 database (FROM, its Redis URL;
# FROM_NAMESPACE, its redis.key_namespace) into the store CONFIG names; the
# source is only read, and running it again continues an interrupted import.
# The recipe is not echoed: FROM may hold a password.
FROM           ?=
FROM_NAMESPACE ?=
.PHONY: import
import: ## copy an upstream Ocypod 0.8 database into the store (FROM=redis://host:6379/0 [FROM_NAMESPACE=ns] CONFIG=ocypod.toml [DRY_RUN=1])
	@test -n "$(FROM)" || { echo 'FROM is not set: make import FROM=redis://host:6379/0 [FROM_NAMESPACE=ns] CONFIG=path/to/ocypod.toml [DRY_RUN=1]' >&2; exit 2; }
	@$(GO) run ./cmd/ocypod-import -from '$(FROM)' -from-namespace '$(FROM_NAMESPACE)' $(if $(CONFIG),-config '$(CONFIG)') $(if $(DRY_RUN),-dry-run)

.PHONY: bench
bench: ## every benchmark in one run on private redis-servers (a few minutes; BullMQ and bee-queue through node and npm when installed); rewrites docs/benchmarks.md
	$(GO) test -run '^$$' -bench . -benchmem -count=1 -timeout 30m ./shared/bench/ -args -doc=$(CURDIR)/docs/benchmarks.md

.PHONY: bench-smoke
bench-smoke: ## run every benchmark body once with tiny sizes (no timing; make test does it too; node is optional)
	$(GO) test -count=1 -run 'TestSmoke|TestCounter|TestPipelinedSeed' -v ./shared/bench/

# `make cost` measures, in one run on a private redis-server, every per-job
# quantity of the cost model (requests, Redis CPU and bytes, Lambda time of
# the warm bootstraps) and prices it (shared/bench/cost_prices_test.go).
COST_OUT ?= bin/cost.txt
.PHONY: cost
cost: ## the cost per million jobs of each deployment choice next to SQS, Cloud Tasks, QStash (a minute or two); rewrites docs/cost.md
	@mkdir -p $(dir $(COST_OUT))
	$(GO) test -count=1 -run '^TestCost$$' -timeout 30m ./shared/bench/ -args -cost -cost-doc=$(CURDIR)/docs/cost.md -cost-text=$(CURDIR)/$(COST_OUT)
	@cat $(COST_OUT)

# ============================================================================
# Lambda build (AWS SAM, Metadata: BuildMethod: makefile, CodeUri: .)
#
# `sam build` copies the repository and runs `make build-<LogicalId>` in it
# with ARTIFACTS_DIR set; whatever lands there (only `bootstrap`) is zipped.
# `make build` runs these targets, and the end-to-end test runs one of them
# (the others it builds in one go build with the same flags):
#   make build-CreateJobFunction ARTIFACTS_DIR=out/CreateJobFunction
#   make build-CreateJobFunction ARTIFACTS_DIR=/tmp/x GOARCH_LAMBDA=amd64
# ============================================================================
GOARCH_LAMBDA   ?= arm64
LAMBDA_OUT      ?= out
GO_LAMBDA_ENV    = CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH_LAMBDA)
GO_LAMBDA_FLAGS  = -tags lambda.norpc -trimpath -buildvcs=false -ldflags='-s -w -buildid='

# Every function as <LogicalId>:<package dir>: lambda-functions.mk, written by
# `make generate` from shared/httpapi/routes.go and sweep.Kinds (a test fails
# when it, template.yaml, functions/, sweeper/ or events/ are out of date).
include lambda-functions.mk

lambda_id    = $(word 1,$(subst :, ,$(1)))
lambda_dir   = $(word 2,$(subst :, ,$(1)))
# events/<dir name>.json for functions, events/sweep-<task>.json for sweepers
lambda_event = events/$(if $(filter sweeper/%,$(call lambda_dir,$(1))),sweep-)$(notdir $(call lambda_dir,$(1))).json
LAMBDA_IDS  := $(foreach f,$(LAMBDA_FUNCTIONS),$(call lambda_id,$(f)))

define lambda_targets
.PHONY: build-$(call lambda_id,$(1)) invoke-$(call lambda_id,$(1))
build-$(call lambda_id,$(1)):
	@test -n "$$(ARTIFACTS_DIR)" || { echo 'ARTIFACTS_DIR is not set (sam build sets it)' >&2; exit 1; }
	$$(GO_LAMBDA_ENV) $$(GO) build $$(GO_LAMBDA_FLAGS) -o $$(ARTIFACTS_DIR)/bootstrap ./$(call lambda_dir,$(1))
invoke-$(call lambda_id,$(1)):
	sam local invoke $(call lambda_id,$(1)) -e $(call lambda_event,$(1)) --env-vars events/local-env.json
endef
$(foreach f,$(LAMBDA_FUNCTIONS),$(eval $(call lambda_targets,$(f))))

.PHONY: build
build: $(addprefix lambda-out-,$(LAMBDA_IDS)) ## build every Lambda bootstrap into out/<LogicalId>/ (GOARCH_LAMBDA=arm64; -j2 helps)

.PHONY: $(addprefix lambda-out-,$(LAMBDA_IDS))
$(addprefix lambda-out-,$(LAMBDA_IDS)): lambda-out-%:
	@$(MAKE) --no-print-directory build-$* ARTIFACTS_DIR=$(LAMBDA_OUT)/$*

.PHONY: lambda-list
lambda-list: ## print every Lambda function as <LogicalId>:<package dir>
	@printf '%s\n' $(LAMBDA_FUNCTIONS)

.PHONY: lambda-sizes
lambda-sizes: build ## build, then list every bootstrap's size in bytes
	@for id in $(LAMBDA_IDS); do printf '%-26s %s\n' $$id "$$(wc -c < $(LAMBDA_OUT)/$$id/bootstrap)"; done

.PHONY: sam-local
sam-local: ## sam build + sam local start-api on a host Redis (SAM CLI + Docker); also invoke-<LogicalId>
	sam build
	sam local start-api --env-vars events/local-env.json

.PHONY: generate
generate: ## rewrite template.yaml's functions, functions/, sweeper/, lambda-functions.mk and missing events/ from the route table; the oapi-codegen client of openapi.json
	$(GO) run ./cmd/gen-deploy
	$(GO) generate ./client/internal/oapiclient

.PHONY: validate-template
validate-template: ## check template.yaml, samconfig.toml, the Makefile and the generated files (SAM schema + route table)
	$(GO) test -count=1 ./internal/deploygen/ ./shared/deploytest/
