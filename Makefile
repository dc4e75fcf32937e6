# `make test` is the README's test command and what CI runs.
GO ?= go

# Every module of go.work: `./...` from the repository root covers only the
# root module's packages, not the nested modules' (cmd/drainkit,
# registry/consul, registry/nacos, ...), so each target names all of them.
# bench/anchors and tools/* are outside go.work on purpose (see go.work).
MODULES := $(shell $(GO) list -m -f '{{.Dir}}' | sed "s|^$(CURDIR)|.|")
PKGS := $(addsuffix /...,$(MODULES))

.PHONY: test vet staticcheck race fuzz consul nacos spring drill bench go125 tidy kube

test: vet staticcheck race fuzz

# staticcheck, pinned, fetched and built through the Go module proxy on first
# use (no other download); override with STATICCHECK=staticcheck to use one
# on PATH.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2

# vet builds what it checks against with -race, as the tests build it
# (`race`, `kube`), so that the dependencies are compiled once for both
# (the go command's cache): without it, registry/kubernetes alone compiled
# client-go twice, 348 CPU-s for vet and the race build from an empty cache
# against 190 CPU-s. No file of drainkit's has a race build constraint, so
# vet checks the same code.
vet:
	$(GO) vet -race $(PKGS)
	GOWORK=off $(GO) -C registry/etcd/internal/kratoswatch vet -race ./...
	GOWORK=off $(GO) -C internal/kubetest vet -race ./...
	GOWORK=off $(GO) -C registry/kubernetes vet -race ./...
	GOWORK=off $(GO) -C registry/kubernetes/internal/clustertest vet -race ./...
	GOWORK=off $(GO) -C cmd/drainkit/internal/kubeslices vet -race ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

# Every finding fails the target (and so `make test` and CI). The modules
# of go.work are checked in one run over all their packages, as vet does:
# a run per module loaded and analysed the packages they share (the root
# module's, grpc-go, the registry clients) once per module. The modules
# outside go.work (OFFWORK) are checked with GOWORK=off, as they build.
OFFWORK := examples/frameworks registry/etcd/internal/kratoswatch internal/kubetest \
	registry/kubernetes registry/kubernetes/internal/clustertest cmd/drainkit/internal/kubeslices

staticcheck:
	$(STATICCHECK) $(PKGS)
	@set -e; for m in $(OFFWORK); do echo "staticcheck $$m/... (GOWORK=off)"; (cd "$$m" && GOWORK=off $(STATICCHECK) ./...); done

# `go test` of several packages prints a package's result only once every
# package listed before it has finished (the drills of cmd/drainkit take
# minutes); with -json it streams, and internal/testprogress prints each
# package's line as it finishes (a failed package with its output).
race:
	$(GO) build -o .testprogress ./internal/testprogress
	bash -o pipefail -c 'DRAINKIT_CONSUL_BIN="$$(./scripts/consul.sh)" DRAINKIT_ETCD_BIN="$$(./scripts/etcd.sh)" DRAINKIT_NACOS_JAR="$$(./scripts/nacos.sh)" $(GO) test -json -race -count=1 -timeout 30m $(PKGS) | ./.testprogress'
	# kratos's etcd discovery against examples/grpcservice: a nested module outside go.work, so no go.mod of drainkit's requires kratos
	DRAINKIT_ETCD_BIN="$$(./scripts/etcd.sh)" GOWORK=off $(GO) -C registry/etcd/internal/kratoswatch test -race -count=1 ./...
	# kratos and go-zero under drainkit: a nested module outside go.work (see go.work)
	GOWORK=off $(GO) -C examples/frameworks vet -race ./...
	GOWORK=off $(GO) -C examples/frameworks test -race -count=1 -timeout 15m ./...
	# the EndpointSlice source (client-go): a module outside go.work (see its go.mod); its cluster tests run in `make kube`
	GOWORK=off $(GO) -C registry/kubernetes test -race -count=1 ./...
	# the endpointslices load pod of drill --kubernetes (client-go): a module outside go.work; its cluster run is internal/kubetest/drilltest
	GOWORK=off $(GO) -C cmd/drainkit/internal/kubeslices test -race -count=1 ./...

# kube runs the tests on a real single-node Kubernetes cluster: the
# harness's own (internal/kubetest) and the shipped examples/kubernetes
# deployed as users deploy it (internal/kubetest/k8sexample). As root; the
# Debian packages containerd, runc, containernetworking-plugins, iptables
# and conntrack (.ci/run installs them); scripts/kube.sh builds Kubernetes
# once, about 20 minutes on 2 cores. .ci/run runs it after `make test`,
# with CI set: a cluster that does not come up fails, never skips. -p 1:
# one package at a time, since the clusters take turns anyway (a machine-wide
# lock) and a package's Start would otherwise finish the teardown of the
# cluster TestStartRecoversKilledRun kills on purpose, before that test's
# own Start. registry/kubernetes/internal/clustertest: the EndpointSlice
# source on the same cluster.
kube:
	DRAINKIT_KUBE_DIR="$$(./scripts/kube.sh)" DRAINKIT_ETCD_BIN="$$(./scripts/etcd.sh)" GOWORK=off $(GO) -C internal/kubetest test -race -count=1 -p 1 -timeout 30m ./...
	DRAINKIT_KUBE_DIR="$$(./scripts/kube.sh)" DRAINKIT_ETCD_BIN="$$(./scripts/etcd.sh)" GOWORK=off $(GO) -C registry/kubernetes/internal/clustertest test -race -count=1 -timeout 15m ./...

# spring drills a real Spring Cloud consumer (issue 32): cmd/drainkit's
# tests with the build tag spring, one JVM of tools/springconsumer (built
# once by scripts/spring.sh into ~/.cache/drainkit, its Maven repository
# ~/.cache/drainkit/m2) per strategy, against a Nacos server of
# scripts/nacos.sh with its shipped push delay. Slow (windows of up to
# 40 s), so not part of `make test`; .ci/run runs it after it, with CI set:
# a missing jar or java fails, never skips. Its six drills run two at a
# time (go test's -parallel default on 2 cores; the learned window's drill
# follows the defaults' drill in one subtest, about 2.5 minutes, while the
# other four share the second slot): about 4 minutes in all, Nacos's start
# included; four at once overloads a busy 2-core machine (requests time out
# before any replica is stopped: an INVALID drill).
spring:
	$(GO) vet -tags spring ./cmd/drainkit
	DRAINKIT_NACOS_JAR="$$(./scripts/nacos.sh)" DRAINKIT_SPRING_JAR="$$(./scripts/spring.sh)" $(GO) test -tags spring -count=1 -parallel 2 -timeout 20m -run '^TestDrillSpring$$' -v ./cmd/drainkit

fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime 5s -fuzzminimizetime 5s ./config
	$(GO) test -run '^$$' -fuzz '^FuzzOptionsFrom$$' -fuzztime 5s -fuzzminimizetime 5s ./registry/consul

# go125 builds and vets every module whose go.mod says go 1.25 with Go 1.25,
# the oldest release they allow, so that no Go 1.26 API or dependency slips
# in, and runs the fast tests with it: the library modules that need no
# server (-short; the registry, example and drill tests start Consul, etcd
# and child processes, and `make test` runs them). The modules held at
# go 1.26 by a dependency (their go.mod says which) are left out, through a
# workspace file of their own (.go125.work), since go.work must say the
# highest go line of its modules. The go command fetches the toolchain from
# the Go module proxy once.
GO125 ?= go1.25.14
MODULES125 := $(shell for m in $(MODULES); do grep -q '^go 1\.25' $$m/go.mod && echo $$m; done)
GO125_TESTS := ./... ./telemetry/... ./consumer/... ./consumer/grpcresolver/... ./consumer/grpcresolver/outlierdetection/... ./grpcdrain/... ./bench/...
go125:
	cp go.work .go125.work && cp go.work.sum .go125.work.sum
	GOWORK=$(CURDIR)/.go125.work $(GO) work edit -go=1.25.0 -dropreplace google.golang.org/genproto $(foreach m,$(filter-out $(MODULES125),$(MODULES)),-dropuse $(m))
	GOWORK=$(CURDIR)/.go125.work GOTOOLCHAIN=$(GO125) $(GO) version
	GOWORK=$(CURDIR)/.go125.work GOTOOLCHAIN=$(GO125) $(GO) build $(addsuffix /...,$(MODULES125))
	GOWORK=$(CURDIR)/.go125.work GOTOOLCHAIN=$(GO125) $(GO) vet $(addsuffix /...,$(MODULES125))
	GOWORK=$(CURDIR)/.go125.work GOTOOLCHAIN=$(GO125) $(GO) test -short -count=1 -timeout 15m $(GO125_TESTS)

# tidy runs `go mod tidy` in every module (scripts/tidy.sh), those of
# go.work and those outside it (OFFWORK).
tidy:
	OFFWORK="$(OFFWORK)" ./scripts/tidy.sh

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
