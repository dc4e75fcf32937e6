#!/usr/bin/env bash
# Prints the path of the runnable jar of the Spring Cloud consumer that
# `drainkit drill --consumer spring` starts with `java -jar` (Spring Boot
# 4.0.7, Spring Cloud 2025.1.4, spring-cloud-starter-alibaba-nacos-discovery
# 2025.1.0.0 with nacos-client 3.1.1, Spring Cloud LoadBalancer and its
# default 35 s cache; issue 32). It builds tools/springconsumer with Maven
# once into the cache; the cache entry is named after a hash of
# tools/springconsumer, so a change there builds a new one. Needs JDK 17+
# (`java`, `javac`) and Maven (`mvn`); the first build downloads about
# 60 MB of jars from Maven Central into the Maven repository
# ~/.cache/drainkit/m2 (kept with the cache, so that CI caches it with the
# other servers), later ones work offline.
#
# Safe for concurrent callers: the build runs under an exclusive flock in a
# temporary directory that is renamed into place (atomic on one file system).
#
# With --cached it never builds: it prints the path only if the jar is
# already in the cache, else exits 3 without output (internal/toolbin then
# skips the Spring tests outside `make spring` and CI), like
# scripts/nacos.sh.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/mavenjar.sh
. "$root/scripts/mavenjar.sh"
if [ "${1:-}" = "--cached" ]; then export MAVENJAR_CACHED=1; fi
maven_jar "springconsumer" "$root/tools/springconsumer" spring-consumer.jar -Dmaven.repo.local="${DRAINKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/drainkit}/m2"
