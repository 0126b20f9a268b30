# Atrium. `make help` lists the targets.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# Every Go module of the workspace (go.work), as package patterns.
MODULES := . ./gateway ./platform ./proto ./services/collections ./services/crm ./services/data ./services/actions
PACKAGES := $(addsuffix /...,$(MODULES))
BUF := .bin/buf
HELM := .bin/helm
KUBECONFORM := .bin/kubeconform
TESTFLAGS ?=
BENCHTIME ?= 3s

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: run
run: ## Run everything in one process (memory store, embedded NATS) with demo data
	go run ./cmd/atrium serve --demo

.PHONY: build
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

# The six binaries: the all-in-one atrium and one per component.
COMMANDS := ./cmd/atrium ./gateway/cmd/atrium-gateway ./services/collections/cmd/atrium-collections \
	./services/crm/cmd/atrium-crm ./services/data/cmd/atrium-data ./services/actions/cmd/atrium-actions

build: ## Build the atrium binary and the per-service binaries into .bin/, with VERSION from git describe
	go build -ldflags "-X main.version=$(VERSION)" -o .bin/ $(COMMANDS)

.PHONY: build-static
build-static: ## Build the six binaries as the Dockerfile does (CGO_ENABLED=0, static) into .bin/static/ and check their build info
	@mkdir -p .bin/static
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o .bin/static/ $(COMMANDS)
	@for c in $(COMMANDS); do b=.bin/static/$$(basename $$c); \
		go version -m $$b | grep -qE '^\s+build\s+CGO_ENABLED=0$$' || { echo "build-static: $$b was not built with CGO_ENABLED=0"; go version -m $$b; exit 1; }; \
	done; echo "build-static: 6 binaries in .bin/static, all CGO_ENABLED=0"

.PHONY: services-up
services-up: ## Start the local PostgreSQL and NATS the tests need, if they are down
	@scripts/services-up.sh

.PHONY: test
test: services-up ## Run every test, PostgreSQL- and NATS-backed ones included
	go test -count=1 -race $(TESTFLAGS) $(PACKAGES)

FUZZTIME ?= 1000000x

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME (default a million executions each); make test runs their seeds
	cd gateway && for f in FuzzQueryParser FuzzBodyDecoding FuzzWriteError; do \
		go test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 10s ./internal/rest/; done
	cd platform && for f in FuzzVerify FuzzSignVerify; do \
		go test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 10s ./principal/; done

.PHONY: lint
lint: $(BUF) ## gofmt, go vet, go mod tidy, buf lint, buf format and buf breaking checks
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\(\.gw\)\?\.go$$')); \
		if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	go vet $(PACKAGES)
	@for m in $(MODULES); do (cd $$m && GOWORK=off go mod tidy -diff >/dev/null) || { echo "go.mod of $$m is not tidy: run go mod tidy there"; exit 1; }; done
	$(BUF) lint
	$(BUF) format proto -d --exit-code
	@if git rev-parse -q --verify HEAD~1 >/dev/null && git cat-file -e HEAD~1:buf.yaml 2>/dev/null; then \
		echo "$(BUF) breaking --against .git#ref=HEAD~1"; $(BUF) breaking --against '.git#ref=HEAD~1'; \
	else echo "buf breaking: no earlier commit with protos to compare against"; fi

.PHONY: generate
generate: $(BUF) ## Regenerate Go, grpc-gateway and OpenAPI code from proto/
	rm -rf gateway/openapi/atrium
	find proto -name '*.pb.go' -o -name '*.pb.gw.go' | xargs -r rm
	$(BUF) generate

.PHONY: check-generated
check-generated: generate ## Fail if the committed generated code differs from a fresh generation
	@if [ -n "$$(git status --porcelain -- proto gateway/openapi)" ]; then \
		echo "generated code is stale; run make generate and commit:"; git status --porcelain -- proto gateway/openapi; exit 1; fi

$(BUF): tools/go.mod tools/go.sum
	@mkdir -p .bin
	cd tools && GOWORK=off go build -o ../$(BUF) github.com/bufbuild/buf/cmd/buf

.PHONY: chart-check
chart-check: $(HELM) $(KUBECONFORM) build-static ## Lint and render the Helm chart (default and production values), validate it against ../shared/k8s-schemas, run its tests
	HELM=$(HELM) KUBECONFORM=$(KUBECONFORM) ATRIUM_BIN_DIR=.bin/static scripts/chart-check.sh

$(HELM): tools/go.mod tools/go.sum
	@mkdir -p .bin
	cd tools && GOWORK=off go build -o ../$(HELM) helm.sh/helm/v3/cmd/helm

$(KUBECONFORM): tools/go.mod tools/go.sum
	@mkdir -p .bin
	cd tools && GOWORK=off go build -o ../$(KUBECONFORM) github.com/yannh/kubeconform/cmd/kubeconform

.PHONY: migrate
migrate: ## Apply the PostgreSQL migrations to ATRIUM_DATABASE_URL
	go run ./cmd/atrium migrate

BENCHFLAGS ?=

.PHONY: bench-crm
bench-crm: services-up build ## CRM lists end to end against the hand-written floor (req/s, p50, p99, ratio), then the stores alone
	go build -o .bin/bench ./bench/cmd/bench
	.bin/bench crm --atrium .bin/atrium $(BENCHFLAGS)
	go test -run '^$$' -bench 'CRM|Prospects' -benchmem -benchtime $(BENCHTIME) -count 1 ./services/crm/internal/adapters/... ./services/crm/internal/transport/grpc

.PHONY: bench-collections
bench-collections: services-up build .bin/pocketbase-peer ## Collections list, get and create on 20,000 items, memory and PostgreSQL, against the floor and PocketBase
	go build -o .bin/bench ./bench/cmd/bench
	.bin/bench collections --atrium .bin/atrium --pocketbase .bin/pocketbase-peer $(BENCHFLAGS)

# PocketBase, the peer of bench-collections: its own module, outside the
# workspace, as tools/ is.
.bin/pocketbase-peer: bench/peers/pocketbase/go.mod bench/peers/pocketbase/go.sum bench/peers/pocketbase/main.go
	cd bench/peers/pocketbase && GOWORK=off go build -o ../../../.bin/pocketbase-peer .

.PHONY: bench-data
bench-data: services-up build ## Data read on 1,000,000 keyword rows (offset 0, offset 50,000, cursor) against the hand-written floor
	go build -o .bin/bench ./bench/cmd/bench
	.bin/bench data --atrium .bin/atrium $(BENCHFLAGS)

.PHONY: bench-actions
bench-actions: services-up build ## generate_blog end to end on PostgreSQL and NATS at 1, 8 and 32 clients: actions/s, latency, response-to-event delay
	go build -o .bin/bench ./bench/cmd/bench
	.bin/bench actions --atrium .bin/atrium $(BENCHFLAGS)

.PHONY: bench-auth
bench-auth: ## Benchmark API key authentication at the gateway (cache hits, principal signing)
	go test -run '^$$' -bench . -benchtime $(BENCHTIME) -count 1 ./gateway/internal/auth ./platform/principal
