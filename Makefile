# `make test` is the README's test command and what CI runs.
GO ?= go

.PHONY: test vet staticcheck race fuzz consul nacos drill bench

test: vet staticcheck race fuzz

# staticcheck, pinned, fetched and built through the Go module proxy on first
# use (no other download); override with STATICCHECK=staticcheck to use one
# on PATH.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2

# MODULES are the directories whose ./... the checks cover: every module of
# go.work when there is one (`go list -m` lists them), else this module.
MODULES = $$(if [ -f go.work ]; then $(GO) list -m -f '{{.Dir}}'; else echo .; fi)

# registry/nacos is a module of its own (go.work lists it): `./...` at the
# root does not reach it, so it is named.
vet:
	$(GO) vet ./... ./registry/nacos/...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

# Every finding fails the target (and so `make test` and CI).
staticcheck:
	@set -e; for m in $(MODULES); do echo "staticcheck $$m/..."; (cd "$$m" && $(STATICCHECK) ./...); done

race:
	DRAINKIT_CONSUL_BIN="$$(./scripts/consul.sh)" DRAINKIT_ETCD_BIN="$$(./scripts/etcd.sh)" DRAINKIT_NACOS_JAR="$$(./scripts/nacos.sh)" $(GO) test -race -count=1 -timeout 30m ./... ./registry/nacos/...

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
