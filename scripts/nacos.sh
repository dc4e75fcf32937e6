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
src="$root/tools/nacos"
sum="$(cd "$src" && find pom.xml src -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-12)"
cache="${DRAINKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/drainkit}"
dir="$cache/nacos-$ver-$sum"
jar="$dir/nacos-server-launcher.jar"
if [ "${1:-}" = "--cached" ]; then
  [ -f "$jar" ] || exit 3
  echo "$jar"
  exit 0
fi
if [ ! -f "$jar" ]; then
  mkdir -p "$cache"
  exec 9>"$dir.lock"
  flock 9
  if [ ! -f "$jar" ]; then
    tmp="$(mktemp -d "$dir.tmp.XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    echo "building the Nacos server $ver into $dir (once)" >&2
    cp -r "$src/pom.xml" "$src/src" "$tmp/"
    (cd "$tmp" && mvn -q -B -DskipTests package) >&2
    mkdir "$tmp/out"
    mv "$tmp/target/nacos-server-launcher.jar" "$tmp/target/lib" "$tmp/out/"
    mv "$tmp/out" "$dir"
    rm -rf "$tmp"
    trap - EXIT
  fi
  exec 9>&-
fi
echo "$jar"
