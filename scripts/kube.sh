#!/usr/bin/env bash
# Prints the directory holding the Kubernetes v1.37.2 commands that drainkit's
# single-node test cluster runs (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kube-proxy, kubectl) and its static pause binary,
# building them once from tools/kube into the cache. The first build compiles
# all of Kubernetes: about 20 minutes on 2 idle cores with an empty module
# cache, more on a busy machine; run it under `nice -n 19` when sharing.
#
# Safe for concurrent callers: the build goes into a temporary directory that
# is renamed into place (rename is atomic on one file system), under an
# exclusive flock so a second caller waits for the first build instead of
# compiling Kubernetes again.
#
# With --cached it never builds: it prints the path only if the commands are
# already in the cache, else exits 3 without output.
set -euo pipefail
ver=1.37.2
major=1
minor=37
cache="${DRAINKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/drainkit}"
dir="$cache/kube-$ver"
cmds=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)
if [ "${1:-}" = "--cached" ]; then
  # Never build: print the path if the commands are in the cache, else exit 3
  # (internal/toolbin then skips the tests that need them outside CI).
  [ -d "$dir" ] || exit 3
  echo "$dir"
  exit 0
fi
if [ ! -d "$dir" ]; then
  mkdir -p "$cache"
  root="$(cd "$(dirname "$0")/.." && pwd)"
  exec 9>"$dir.lock"
  flock 9
  if [ ! -d "$dir" ]; then
    tmp="$(mktemp -d "$dir.tmp.XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    echo "building Kubernetes $ver into $dir (once)" >&2
    # The version the commands report (kubectl version, the node's
    # kubeletVersion, /version): what Kubernetes' hack/lib/version.sh sets in
    # both version packages; without it they say v0.0.0-master.
    ldflags='-s -w'
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldflags+=" -X $pkg.gitVersion=v$ver -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
    done
    pkgs=()
    for c in "${cmds[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
    # tools/kube is a module of its own, outside the root go.work. One go
    # build for all commands shares the packages they have in common.
    # CGO_ENABLED=0: static binaries, as Kubernetes releases them.
    (cd "$root/tools/kube" && GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$tmp/" "${pkgs[@]}" ./pause) >&2
    chmod 755 "$tmp" "$tmp"/*
    mv -T "$tmp" "$dir"
    trap - EXIT
  fi
  exec 9>&-
fi
echo "$dir"
