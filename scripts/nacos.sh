#!/usr/bin/env bash
# Prints the path of the runnable jar of the Nacos server (3.1.0-bugfix, the
# 3.x line io.github.pig-mesh.nacos republishes on Maven Central) that the
# Nacos registry tests start with `java -jar` on loopback ports with a
# temporary nacos.home. It builds tools/nacos with Maven once into the cache
# (the jar beside its lib/ directory); the cache entry is named after a hash
# of tools/nacos, so a change there builds a new one. Needs JDK 17+ (`java`,
# `javac`) and Maven (`mvn`); the first build downloads about 150 MB of jars
# into ~/.m2 (a minute or two), later ones work offline.
#
# Safe for concurrent callers: the build runs under an exclusive flock in a
# temporary directory that is renamed into place (atomic on one file system).
#
# With --cached it never builds: it prints the path only if the jar is
# already in the cache, else exits 3 without output (internal/toolbin then
# skips the Nacos tests outside `make test` and CI), like scripts/consul.sh.
set -euo pipefail
ver=3.1.0-bugfix
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/mavenjar.sh
. "$root/scripts/mavenjar.sh"
if [ "${1:-}" = "--cached" ]; then export MAVENJAR_CACHED=1; fi
maven_jar "nacos-$ver" "$root/tools/nacos" nacos-server-launcher.jar
