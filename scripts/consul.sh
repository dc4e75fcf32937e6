#!/usr/bin/env bash
# Prints the path of the Consul v1.14.0 agent that the registry tests run as a
# dev agent on loopback, building it once from tools/consul into the cache
# (about 3-4 minutes on 2 cores with an empty module cache).
set -euo pipefail
ver=1.14.0
cache="${DRAINKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/drainkit}"
bin="$cache/consul-$ver"
if [ ! -x "$bin" ]; then
  mkdir -p "$cache"
  root="$(cd "$(dirname "$0")/.." && pwd)"
  echo "building consul $ver into $bin (once)" >&2
  (cd "$root/tools/consul" && go build -o "$bin.tmp" github.com/hashicorp/consul) >&2
  mv "$bin.tmp" "$bin"
fi
echo "$bin"
