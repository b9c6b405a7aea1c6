#!/usr/bin/env bash
# Builds the binaries the real-cluster tests run, from the Go module proxy, into a cache folder
# outside the checkout keyed by version, and prints that folder. Idempotent: a binary already
# built is reused (about 0.1 s). Every download is verified against the go.sum committed next to
# this script (-mod=readonly: a missing or different checksum fails the build).
#
#   build.sh kubernetes        etcd, kube-apiserver, kube-controller-manager (v1.35.4, etcd 3.6.5)
#   build.sh openfga VERSION   the openfga command of that version (a folder openfga-VERSION here)
#
# Cache: $OPENFGA_OPERATOR_TEST_CACHE, default ~/.cache/openfga-operator-test.
# Cold: about 5 min for Kubernetes and 4-7 min per openfga version on 2 cores.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${OPENFGA_OPERATOR_TEST_CACHE:-$HOME/.cache/openfga-operator-test}
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" GOSUMDB=off

command -v go >/dev/null || { echo "build.sh: Go is needed (apt-get install golang, or Go 1.25+)" >&2; exit 1; }

# Builds into a temporary folder and renames it, so an interrupted build never looks finished.
build_into() { # out-dir module-dir go-build-args...
  local out=$1 mod=$2; shift 2
  if [ -f "$out/.done" ] && cmp -s "$mod/go.sum" "$out/go.sum"; then echo "$out"; return; fi
  local tmp="$out.tmp.$$"
  rm -rf "$tmp" && mkdir -p "$tmp"
  (cd "$mod" && go build -trimpath -o "$tmp/" "$@") >&2
  cp "$mod/go.sum" "$tmp/go.sum" && touch "$tmp/.done"
  rm -rf "$out" && mv "$tmp" "$out"
  echo "$out"
}

case "${1:-}" in
  kubernetes)
    v=v1.35.4
    stamp=""
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      stamp+=" -X $p.gitVersion=$v -X $p.gitMajor=1 -X $p.gitMinor=35"
    done
    build_into "$cache/kubernetes-$v" "$here/kubernetes" -ldflags "-s -w$stamp" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager ./etcd
    ;;
  openfga)
    v=${2:?usage: build.sh openfga VERSION}
    [ -f "$here/openfga-$v/go.sum" ] || { echo "build.sh: no pinned module for openfga $v in $here" >&2; exit 1; }
    build_into "$cache/openfga-$v" "$here/openfga-$v" \
      -ldflags "-s -w -X github.com/openfga/openfga/internal/build.Version=$v" \
      github.com/openfga/openfga/cmd/openfga
    ;;
  *) echo "usage: build.sh kubernetes | build.sh openfga VERSION" >&2; exit 2 ;;
esac
