# `make test` is the README's test command and what CI runs.
GO ?= go

.PHONY: test vet race fuzz consul nacos drill bench

test: vet race fuzz

# registry/nacos is a module of its own (go.work lists it): `./...` at the
# root does not reach it, so it is named.
vet:
	$(GO) vet ./... ./registry/nacos/...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

race:
	DRAINKIT_CONSUL_BIN="$$(./scripts/consul.sh)" DRAINKIT_ETCD_BIN="$$(./scripts/etcd.sh)" DRAINKIT_NACOS_JAR="$$(./scripts/nacos.sh)" $(GO) test -race -count=1 -timeout 30m ./... ./registry/nacos/...
	# kratos's etcd discovery against examples/grpcservice: a nested module, so drainkit's go.mod never requires kratos
	cd registry/etcd/internal/kratoswatch && DRAINKIT_ETCD_BIN="$$(../../../../scripts/etcd.sh)" GOWORK=off $(GO) vet ./... && DRAINKIT_ETCD_BIN="$$(../../../../scripts/etcd.sh)" GOWORK=off $(GO) test -race -count=1 ./...

fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime 5s -fuzzminimizetime 5s ./config

consul:
	./scripts/consul.sh

nacos:
	./scripts/nacos.sh

drill:
	$(GO) run ./cmd/drainkit drill

# `make bench` prints the tables of BENCHMARKS.md (issue 14; under 15 minutes);
# `make bench-quick` runs them at reduced size without asserting timings (CI).
bench:
	DRAINKIT_CONSUL_BIN="$$(./scripts/consul.sh)" DRAINKIT_ETCD_BIN="$$(./scripts/etcd.sh)" nice $(GO) run ./bench/cmd/benchrun

.PHONY: bench-quick
bench-quick:
	DRAINKIT_CONSUL_BIN="$$(./scripts/consul.sh)" DRAINKIT_ETCD_BIN="$$(./scripts/etcd.sh)" $(GO) run ./bench/cmd/benchrun -quick
