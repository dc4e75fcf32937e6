#!/usr/bin/env bash
# Runs `go mod tidy` in every module of go.work. `go mod tidy` ignores
# go.work, and the nested modules require the root module (and each other)
# at a version that is not published until a release (docs/RELEASING.md),
# so each module is tidied with temporary replace directives pointing at
# the checkout, removed again afterwards: the committed go.mod files carry
# no replace, and a consumer resolves published versions. The modules
# outside go.work named by $OFFWORK (the Makefile passes its list) carry
# their replace directives and are tidied as they are, with GOWORK=off.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
mods=$(go work edit -json | sed -n 's/.*"DiskPath": "\(.*\)".*/\1/p')
for pass in 1 2; do # twice: a module's go.sum depends on the others' go.mod
  for m in $mods; do
    (
      cd "$root/$m"; echo "tidy $m" >&2
      drops=()
      for o in $mods; do
        path=$(sed -n 's/^module //p' "$root/$o/go.mod")
        [ "$o" = "$m" ] && continue
        rel=$(realpath --relative-to="$root/$m" "$root/$o"); case $rel in .*) ;; *) rel=./$rel ;; esac
        go mod edit -replace "$path=$rel"
        drops+=(-dropreplace "$path")
      done
      GOWORK=off GOFLAGS=-mod=mod go mod tidy "$@" || { go mod edit "${drops[@]}"; exit 1; }
      go mod edit "${drops[@]}"
    )
  done
done
for m in ${OFFWORK:-}; do
  echo "tidy $m (outside go.work)" >&2
  (cd "$root/$m" && GOWORK=off GOFLAGS=-mod=mod go mod tidy "$@")
done
