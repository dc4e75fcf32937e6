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
	$(GO) -C workdrain/natsdrain vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

# Every finding fails the target (and so `make test` and CI).
staticcheck:
	@set -e; for m in $(MODULES); do echo "staticcheck $$m/..."; (cd "$$m" && $(STATICCHECK) ./...); done

race:
	DRAINKIT_CONSUL_BIN="$$(./scripts/consul.sh)" DRAINKIT_ETCD_BIN="$$(./scripts/etcd.sh)" DRAINKIT_NACOS_JAR="$$(./scripts/nacos.sh)" $(GO) test -race -count=1 -timeout 30m ./... ./registry/nacos/...
	$(GO) -C workdrain/natsdrain test -race -count=1 -timeout 10m ./...

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
bench: bench-worker
	DRAINKIT_CONSUL_BIN="$$(./scripts/consul.sh)" DRAINKIT_ETCD_BIN="$$(./scripts/etcd.sh)" nice $(GO) run ./bench/cmd/benchrun

# The worker acceptance at the issue's full size (issue 24): 10,000 messages
# at 300/s through three natsdrain replicas rolling-restarted (`make test`
# runs 3,000). It prints the tally and the exit codes.
.PHONY: bench-worker
bench-worker:
	DRAINKIT_NATS_MESSAGES=10000 nice $(GO) -C workdrain/natsdrain test -count=1 -timeout 10m -run '^TestRollingRestart' -v ./...

.PHONY: bench-quick
bench-quick:
	DRAINKIT_CONSUL_BIN="$$(./scripts/consul.sh)" DRAINKIT_ETCD_BIN="$$(./scripts/etcd.sh)" $(GO) run ./bench/cmd/benchrun -quick
