# `make test` is the README's test command and what CI runs.
GO ?= go

# Every module of go.work: `./...` from the repository root covers only the
# root module's packages, not the nested modules' (cmd/drainkit,
# registry/consul, ...), so each target names all of them. bench/anchors and
# tools/* are outside go.work on purpose (see their go.mod).
MODULES := $(shell $(GO) list -m -f '{{.Dir}}' | sed "s|^$(CURDIR)|.|")
PKGS := $(addsuffix /...,$(MODULES))

# GO125 is the Go 1.25 toolchain that proves the modules' `go 1.25.0` line
# (make go125); the go command fetches it from the Go module proxy once.
GO125 ?= go1.25.14

.PHONY: test vet race fuzz consul drill bench go125 tidy

test: vet race fuzz

vet:
	$(GO) vet $(PKGS)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

race:
	DRAINKIT_CONSUL_BIN="$$(./scripts/consul.sh)" DRAINKIT_ETCD_BIN="$$(./scripts/etcd.sh)" $(GO) test -race -count=1 -timeout 30m $(PKGS)

fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime 5s -fuzzminimizetime 5s ./config
	$(GO) test -run '^$$' -fuzz '^FuzzFromConfig$$' -fuzztime 5s -fuzzminimizetime 5s ./registry/consul

# go125 builds and vets every module with Go 1.25, the oldest release their
# go.mod allows, so that no Go 1.26 API or dependency slips in, and runs the
# fast tests with it: the library modules that need no server (-short; the
# registry, example and drill tests start Consul, etcd and child processes,
# and `make test` runs them).
GO125_TESTS := ./... ./telemetry/... ./consumer/grpcresolver/outlierdetection/... ./bench/...
go125:
	GOTOOLCHAIN=$(GO125) $(GO) version
	GOTOOLCHAIN=$(GO125) $(GO) build $(PKGS)
	GOTOOLCHAIN=$(GO125) $(GO) vet $(PKGS)
	GOTOOLCHAIN=$(GO125) $(GO) test -short -count=1 -timeout 15m $(GO125_TESTS)

# tidy runs `go mod tidy` in every module (scripts/tidy.sh).
tidy:
	./scripts/tidy.sh

consul:
	./scripts/consul.sh

drill:
	$(GO) run ./cmd/drainkit drill

# `make bench` prints the tables of BENCHMARKS.md (issue 14; under 15 minutes);
# `make bench-quick` runs them at reduced size without asserting timings (CI).
bench:
	DRAINKIT_CONSUL_BIN="$$(./scripts/consul.sh)" DRAINKIT_ETCD_BIN="$$(./scripts/etcd.sh)" nice $(GO) run ./bench/cmd/benchrun

.PHONY: bench-quick
bench-quick:
	DRAINKIT_CONSUL_BIN="$$(./scripts/consul.sh)" DRAINKIT_ETCD_BIN="$$(./scripts/etcd.sh)" $(GO) run ./bench/cmd/benchrun -quick
