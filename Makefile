# `make test` is the README's test command and what CI runs.
GO ?= go

.PHONY: test vet race fuzz consul drill bench

test: vet race fuzz

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

race:
	DRAINKIT_CONSUL_BIN="$$(./scripts/consul.sh)" DRAINKIT_ETCD_BIN="$$(./scripts/etcd.sh)" $(GO) test -race -count=1 -timeout 30m ./...
	cd examples/frameworks && $(GO) vet ./... && $(GO) test -race -count=1 -timeout 15m ./...

fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime 5s -fuzzminimizetime 5s ./config

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
