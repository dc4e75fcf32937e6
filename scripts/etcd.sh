#!/usr/bin/env bash
# Prints the path of the etcd v3.7.3 server that the etcd registry tests start
# on loopback ports with a temporary data directory, building it once from
# tools/etcd into the cache (a minute or two on 2 cores with an empty module
# cache).
#
# Safe for concurrent callers: each caller builds into its own temporary file
# and renames it into place (rename is atomic on one file system), under an
# exclusive flock so a second caller waits for the first build instead of
# compiling etcd again.
#
# With --cached it never builds: it prints the path only if the binary is
# already in the cache, else exits 3 without output.
set -euo pipefail
ver=3.7.3
cache="${DRAINKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/drainkit}"
bin="$cache/etcd-$ver"
if [ "${1:-}" = "--cached" ]; then
  # Never build: print the path if the binary is in the cache, else exit 3
  # (internal/toolbin then skips the tests that need it outside CI).
  [ -x "$bin" ] || exit 3
  echo "$bin"
  exit 0
fi
if [ ! -x "$bin" ]; then
  mkdir -p "$cache"
  root="$(cd "$(dirname "$0")/.." && pwd)"
  exec 9>"$bin.lock"
  flock 9
  if [ ! -x "$bin" ]; then
    tmp="$(mktemp "$bin.tmp.XXXXXX")"
    trap 'rm -f "$tmp"' EXIT
    echo "building etcd $ver into $bin (once)" >&2
    # tools/etcd is a module of its own, outside the root go.work.
    (cd "$root/tools/etcd" && GOWORK=off go build -o "$tmp" go.etcd.io/etcd/server/v3) >&2
    chmod 755 "$tmp"
    mv -f "$tmp" "$bin"
    trap - EXIT
  fi
  exec 9>&-
fi
echo "$bin"
