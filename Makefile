# Atrium. `make help` lists the targets.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# The Go toolchain of every target: builds, make run, make test, make lint
# and CI. Go 1.26.8 has standard-library vulnerabilities that govulncheck
# finds reachable from Atrium (net/http, crypto/tls, crypto/x509,
# html/template, os); go1.27.3 fixes them. The go command fetches it through
# the module proxy on first use, whatever Go is installed. The go.mod files
# keep go 1.26: the code needs nothing newer, and a toolchain line there is
# ignored where GOTOOLCHAIN=local is set (as on the build machines).
# Override on the command line: make test GOTOOLCHAIN=local.
GOTOOLCHAIN := go1.27.3
export GOTOOLCHAIN

# Every Go module of the workspace (go.work), as package patterns.
MODULES := . ./gateway ./platform ./proto ./services/collections ./services/crm ./services/data ./services/actions ./services/webhooks ./services/audit ./sdk/go
PACKAGES := $(addsuffix /...,$(MODULES))
# The tool modules outside the workspace, each pinning its tools.
TOOL_MODULES := ./tools ./tools/lint ./tools/vuln ./tools/s3
BUF := .bin/buf
HELM := .bin/helm
KUBECONFORM := .bin/kubeconform
GOLANGCI_LINT := .bin/golangci-lint
GOVULNCHECK := .bin/govulncheck
INDEXDB := .bin/indexdb
VULNDB := .bin/vulndb
VERSITYGW := .bin/versitygw
TESTFLAGS ?=
# TESTTIMEOUT bounds each test binary. cmd/atrium holds the three
# deployments, the cluster of separate processes, the replicas under
# faults and the Chromium journeys: with -race, beside every other package
# on 2 cores, it passed go test's default of 10 minutes in CI (601 s).
TESTTIMEOUT ?= 30m
BENCHTIME ?= 3s

.PHONY: help
help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: run
run: ## Run everything in one process (memory store, embedded NATS) with demo data
	@# Built, then run without go run: go run exits 1 when interrupted, so
	@# make would end a clean stop on Ctrl-C with "Error 1".
	go build -o .bin/atrium ./cmd/atrium
	exec .bin/atrium serve --demo

.PHONY: cluster
cluster: build ## Run the replicated topology locally: two replicas of every component, a three-node NATS cluster, PostgreSQL; Ctrl-C stops it
	scripts/cluster.sh

.PHONY: build
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

# The eight binaries: the all-in-one atrium and one per component.
COMMANDS := ./cmd/atrium ./gateway/cmd/atrium-gateway ./services/collections/cmd/atrium-collections \
	./services/crm/cmd/atrium-crm ./services/data/cmd/atrium-data ./services/actions/cmd/atrium-actions ./services/webhooks/cmd/atrium-webhooks \
	./services/audit/cmd/atrium-audit

build: ## Build the atrium binary and the per-service binaries into .bin/, with VERSION from git describe
	go build -ldflags "-X main.version=$(VERSION)" -o .bin/ $(COMMANDS)

.PHONY: build-static
build-static: ## Build the eight binaries as the Dockerfile does (CGO_ENABLED=0, static) into .bin/static/ and check their build info
	@mkdir -p .bin/static
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o .bin/static/ $(COMMANDS)
	@for c in $(COMMANDS); do b=.bin/static/$$(basename $$c); \
		go version -m $$b | grep -qE '^\s+build\s+CGO_ENABLED=0$$' || { echo "build-static: $$b was not built with CGO_ENABLED=0"; go version -m $$b; exit 1; }; \
	done; echo "build-static: 8 binaries in .bin/static, all CGO_ENABLED=0"

# ATRIUM_BIN is the binary malformed-check starts (.ci/run gives it the
# static build it has just made).
ATRIUM_BIN ?= .bin/atrium

.PHONY: malformed-check
malformed-check: ## Start atrium serve --demo on loopback (ports 18450-18453) and send every route malformed requests; fails on any 5xx but 503 (scripts/malformed)
	@test -x $(ATRIUM_BIN) || $(MAKE) build
	go run ./scripts/malformed -atrium $(ATRIUM_BIN)

.PHONY: services-up
services-up: $(VERSITYGW) ## Start the local PostgreSQL, NATS and S3-compatible server (versitygw) the tests need, if they are down
	@VERSITYGW=$(VERSITYGW) scripts/services-up.sh

# The S3-compatible server of the object store tests (versitygw, Apache-2.0:
# an S3 gateway over a directory), in a module of its own like the other
# tools: its dependencies (the AWS and Azure SDKs) stay out of the runtime
# modules.
$(VERSITYGW): tools/s3/go.mod tools/s3/go.sum
	@mkdir -p .bin
	cd tools/s3 && GOWORK=off go build -o ../../$(VERSITYGW) github.com/versity/versitygw/cmd/versitygw

# The race runtime sleeps a second at exit by default, to catch races
# reported late: a second for each of the 40-odd test binaries. Races found
# while the tests run fail them all the same.
GORACE ?= atexit_sleep_ms=0

.PHONY: test
test: services-up ## Run every test, PostgreSQL- and NATS-backed ones included
	GORACE="$(GORACE)" go test -count=1 -race -timeout $(TESTTIMEOUT) $(TESTFLAGS) $(PACKAGES)

FUZZTIME ?= 1000000x

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME (default a million executions each); make test runs their seeds
	cd gateway && for f in FuzzQueryParser FuzzBodyDecoding FuzzWriteError; do \
		go test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 10s ./internal/rest/; done
	cd platform && for f in FuzzVerify FuzzSignVerify; do \
		go test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 10s ./principal/; done
	cd platform && go test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s ./prefer/
	cd gateway && go test -run '^$$' -fuzz '^FuzzUploadParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s .
	cd services/collections && go test -run '^$$' -fuzz '^FuzzDimensions$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10s ./internal/app/filetype/

.PHONY: lint
lint: $(BUF) $(GOLANGCI_LINT) $(GOVULNCHECK) $(VULNDB) ## gofmt, sleeps in tests, go vet, go mod tidy, golangci-lint, govulncheck, buf lint, buf format and buf breaking checks
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\(\.gw\)\?\.go$$')); \
		if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	@scripts/check-test-sleeps.sh
	go vet $(PACKAGES)
	@for m in $(MODULES) $(TOOL_MODULES); do (cd $$m && GOWORK=off go mod tidy -diff >/dev/null) || { echo "go.mod of $$m is not tidy: run go mod tidy there"; exit 1; }; done
	$(GOLANGCI_LINT) run $(PACKAGES)
	$(GOVULNCHECK) -db file://$(CURDIR)/$(VULNDB) $(PACKAGES)
	$(BUF) lint
	$(BUF) format proto -d --exit-code
	@if git rev-parse -q --verify HEAD~1 >/dev/null && git cat-file -e HEAD~1:buf.yaml 2>/dev/null; then \
		echo "$(BUF) breaking --against .git#ref=HEAD~1"; $(BUF) breaking --against '.git#ref=HEAD~1'; \
	else echo "buf breaking: no earlier commit with protos to compare against"; fi

.PHONY: generate
generate: $(BUF) ## Regenerate Go, grpc-gateway and OpenAPI code from proto/, the actions service's copy of the data catalog, and the gateway's copies of the data and actions catalogs
	rm -rf gateway/openapi/atrium
	find proto -name '*.pb.go' -o -name '*.pb.gw.go' | xargs -r rm
	$(BUF) generate
	cd services/data && go generate ./internal/app
	cd services/actions && go generate ./internal/app/catalog

.PHONY: openapi-lint
openapi-lint: ## Lint the OpenAPI 3.1 documents with Redocly CLI (installed from npm into tools/redocly on first use)
	bash scripts/openapi-lint.sh

.PHONY: mcp-inspector-check
mcp-inspector-check: ## List and call the MCP tools of atrium serve --demo with the MCP Inspector's CLI (installed from npm into tools/mcp-inspector on first use)
	bash scripts/mcp-inspector-check.sh

.PHONY: sdk-ts
sdk-ts: ## TypeScript SDK (sdk/ts): npm ci (pinned), generate its types from the public OpenAPI document, typecheck and build
	bash scripts/sdk-ts.sh generate
	bash scripts/sdk-ts.sh build

.PHONY: test-ts
test-ts: services-up ## TypeScript SDK tests (node --test): a live atrium serve (memory and PostgreSQL), retries against a fake server, Chromium, the npm tarball
	bash scripts/sdk-ts.sh test

.PHONY: check-ts-generated
check-ts-generated: ## Fail if sdk/ts/src/generated differs from the types of the current public OpenAPI document
	bash scripts/sdk-ts.sh check

.PHONY: check-generated
check-generated: generate ## Fail if the committed generated code differs from a fresh generation
	@if [ -n "$$(git status --porcelain -- proto gateway/openapi services/actions/internal/app/datasets)" ]; then \
		echo "generated code is stale; run make generate and commit:"; git status --porcelain -- proto gateway/openapi services/actions/internal/app/datasets; exit 1; fi

$(BUF): tools/go.mod tools/go.sum
	@mkdir -p .bin
	cd tools && GOWORK=off go build -o ../$(BUF) github.com/bufbuild/buf/cmd/buf

.PHONY: chart-check
chart-check: $(HELM) $(KUBECONFORM) build-static ## Lint and render the Helm chart (default and production values), validate it against ../shared/k8s-schemas, run its tests
	HELM=$(HELM) KUBECONFORM=$(KUBECONFORM) ATRIUM_BIN_DIR=.bin/static scripts/chart-check.sh

# golangci-lint has its own module: its large dependency graph would move
# the versions buf, helm and kubeconform build with.
$(GOLANGCI_LINT): tools/lint/go.mod tools/lint/go.sum
	@mkdir -p .bin
	cd tools/lint && GOWORK=off go build -o ../../$(GOLANGCI_LINT) github.com/golangci/golangci-lint/v2/cmd/golangci-lint

# govulncheck and the vulnerability database: vuln.go.dev is not reachable
# from the build machines, so the database is built from the OSV files of
# the golang.org/x/vulndb module pinned in tools/vuln/go.mod (fetched from
# the module proxy) with that module's indexdb. To take newer advisories,
# bump the pin: cd tools/vuln && GOWORK=off go get golang.org/x/vulndb@latest
$(GOVULNCHECK): tools/vuln/go.mod tools/vuln/go.sum
	@mkdir -p .bin
	cd tools/vuln && GOWORK=off go build -o ../../$(GOVULNCHECK) golang.org/x/vuln/cmd/govulncheck

$(INDEXDB): tools/vuln/go.mod tools/vuln/go.sum
	@mkdir -p .bin
	cd tools/vuln && GOWORK=off go build -o ../../$(INDEXDB) golang.org/x/vulndb/cmd/indexdb

$(VULNDB): tools/vuln/go.mod tools/vuln/go.sum $(INDEXDB)
	rm -rf $(VULNDB)
	cd tools/vuln && GOWORK=off go mod download golang.org/x/vulndb
	$(INDEXDB) -vulns "$$(cd tools/vuln && GOWORK=off go list -m -f '{{.Dir}}' golang.org/x/vulndb)/data/osv" -out $(VULNDB)

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
	go test -run '^$$' -bench 'CRM|Prospects' -benchmem -benchtime $(BENCHTIME) -count 1 ./services/crm/internal/adapters/... ./services/crm/internal/transport/grpcserver

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

.PHONY: bench-reports
bench-reports: ## A client report from a year of rows (1,000 keywords tracked weekly, 5,000 backlinks, 2,000 runs): seconds to HTML and to PDF
	go test -run '^$$' -bench 'BenchmarkReportYear' -benchtime 5x ./services/actions/internal/app/report/

.PHONY: bench-actions-async
bench-actions-async: services-up build ## Asynchronous generate_blog on PostgreSQL with a 2 s text provider: submissions/s and 202 p99 at 32 clients, completions/s, a small agency's queue wait beside 10,000 queued
	go build -o .bin/bench ./bench/cmd/bench
	.bin/bench actions --async --atrium .bin/atrium $(BENCHFLAGS)

.PHONY: bench-webhooks
bench-webhooks: services-up build ## Webhook deliveries on PostgreSQL from item writes: 1,000 endpoints of 100 sites, healthy then 10% failing and 1% hanging, against the hand-written floor
	go build -o .bin/bench ./bench/cmd/bench
	.bin/bench webhooks --atrium .bin/atrium $(BENCHFLAGS)

.PHONY: bench-realtime
bench-realtime: services-up build ## Live updates: 10,000 open realtime streams on one gateway, a published write fanned out to 1,000 of them (p50/p99 from the 201 to the last subscriber's event), memory per stream
	go build -o .bin/bench ./bench/cmd/bench
	.bin/bench realtime --atrium .bin/atrium $(BENCHFLAGS)

.PHONY: bench-schedules
bench-schedules: services-up build ## 10,000 schedules due in the same minute on PostgreSQL, two atrium-actions processes: each slot started once, slot to queued p50/p99, scheduler CPU per due schedule, the split, against the hand-written floor
	go build -o .bin/bench ./bench/cmd/bench
	.bin/bench schedules --atrium .bin/atrium --actions .bin/atrium-actions $(BENCHFLAGS)

.PHONY: bench-studio
.PHONY: bench-auth
bench-studio: services-up build ## Atrium Studio: the items list and item editor pages at 20,000 items, memory and PostgreSQL, against the JSON API's same request (and the floor): pages/s, p99, the console's overhead
	go build -o .bin/bench ./bench/cmd/bench
	.bin/bench studio --atrium .bin/atrium $(BENCHFLAGS)

bench-auth: services-up build ## Authentication: a session cookie against a cached key (req/s, p99) and the floor, argon2id logins at 8 concurrent (p99), the API's p99 beside 100 clients sending wrong passwords; then the micro-benchmarks (cache hits, principal signing)
	go build -o .bin/bench ./bench/cmd/bench
	.bin/bench auth --atrium .bin/atrium $(BENCHFLAGS)
	go test -run '^$$' -bench . -benchtime $(BENCHTIME) -count 1 ./gateway/internal/auth ./platform/principal
