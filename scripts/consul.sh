#!/usr/bin/env bash
# Prints the path of the Consul v1.14.0 agent that the registry tests run as a
# dev agent on loopback, building it once from tools/consul into the cache
# (about 3-4 minutes on 2 cores with an empty module cache).
#
# Safe for concurrent callers: builds are serialised with flock(1) on
# "$bin.lock" where flock exists (a second caller waits, then finds the
# binary), and each build writes a temporary file of its own that is renamed
# into place atomically, so no caller ever sees or runs a partial binary.
#
# Environment: DRAINKIT_CACHE overrides the cache directory (default
# $XDG_CACHE_HOME/drainkit or ~/.cache/drainkit); DRAINKIT_GO overrides the
# go command used to build (default go; the script's tests use a fake).
#
# With --cached it never builds: it prints the path only if the binary is
# already in the cache, else exits 3 without output.
set -euo pipefail
ver=1.14.0
cache="${DRAINKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/drainkit}"
bin="$cache/consul-$ver"
gocmd="${DRAINKIT_GO:-go}"
if [ "${1:-}" = "--cached" ]; then
  # Never build: print the path if the binary is in the cache, else exit 3
  # (internal/toolbin then skips the tests that need it outside CI).
  [ -x "$bin" ] || exit 3
  echo "$bin"
  exit 0
fi

build() {
  [ -x "$bin" ] && return 0
  local root tmp
  root="$(cd "$(dirname "$0")/.." && pwd)"
  tmp="$(mktemp "$bin.tmp.XXXXXX")"
  trap 'rm -f "$tmp"' EXIT
  echo "building consul $ver into $bin (once)" >&2
  # tools/consul is a module of its own, outside the root go.work.
  (cd "$root/tools/consul" && GOWORK=off "$gocmd" build -o "$tmp" github.com/hashicorp/consul) >&2
  chmod +x "$tmp"
  mv -f "$tmp" "$bin" # rename(2): atomic within the directory
  trap - EXIT
}

if [ ! -x "$bin" ]; then
  mkdir -p "$cache"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$bin.lock"
    flock 9
    build
    exec 9>&-
  else
    build
  fi
fi
echo "$bin"
