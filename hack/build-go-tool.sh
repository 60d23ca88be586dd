#!/usr/bin/env bash
# Builds a test tool (helm, k9s) from the Go module proxy and caches it by version, like the
# control plane: only the first run pays. Test tools are never shipped. Prints the binary's path.
#   bash hack/build-go-tool.sh helm      (HELM_VERSION, default v4.3.1)
#   bash hack/build-go-tool.sh k9s       (K9S_VERSION, default v0.50.16)
set -euo pipefail

tool="${1:?usage: build-go-tool.sh helm|k9s}"
case "$tool" in
  helm) pkg=helm.sh/helm/v4/cmd/helm; version="${HELM_VERSION:-v4.3.1}" ;;
  k9s) pkg=github.com/derailed/k9s; version="${K9S_VERSION:-v0.50.16}" ;;
  *) echo "build-go-tool: unknown tool '$tool' (helm or k9s)" >&2; exit 2 ;;
esac
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-terminating"
out="$cache_root/tools/$tool-$version"
if [ -x "$out/$tool" ]; then
  echo "$out/$tool"
  exit 0
fi
mkdir -p "$cache_root/tools"
# One build at a time: a caller that comes while another builds (the test session's early
# build of helm, then the helm tests) waits for it and finds the binary.
if command -v flock >/dev/null; then
  exec 9>"$cache_root/tools/.$tool-$version.lock"
  flock 9
  if [ -x "$out/$tool" ]; then
    echo "$out/$tool"
    exit 0
  fi
fi
command -v go >/dev/null || { echo "build-go-tool: go is required to build $tool" >&2; exit 1; }
# A private GOBIN per run: two concurrent builds never write one file.
staging=$(mktemp -d "$cache_root/tools/.$tool.XXXXXX")
trap 'rm -rf "$staging"' EXIT
echo "build-go-tool: building $tool $version" >&2
# The toolchain the module's go.mod asks for, fetched from the module proxy if newer.
GOTOOLCHAIN=auto GOBIN="$staging" CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false" \
  go install -ldflags "-s -w" "$pkg@$version"
mkdir -p "$out"
mv "$staging/$tool" "$out/$tool"
echo "$out/$tool"
