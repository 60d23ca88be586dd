#!/usr/bin/env bash
# Builds hack/csi-driver (a minimal CSI node plugin that also registers itself with the kubelet)
# for the harness's real node, from the Go module proxy, and caches the binary by the source's
# hash and the pinned module versions (its own cache dir: the control plane's key is untouched).
# Prints the path of the binary.
set -euo pipefail

CSI_SPEC_VERSION="${CSI_SPEC_VERSION:-v1.9.0}"     # what k8s.io/kubernetes v1.36.3 pins
GRPC_VERSION="${GRPC_VERSION:-v1.79.3}"             # likewise
KUBELET_API_VERSION="${KUBELET_API_VERSION:-v0.36.3}"
GO_VERSION="${GO_VERSION:-1.26.0}"
here="$(cd "$(dirname "$0")" && pwd)"
src="$here/csi-driver/main.go"
key=$( { cat "$src"; echo "$CSI_SPEC_VERSION $GRPC_VERSION $KUBELET_API_VERSION $GO_VERSION"; } | sha256sum | cut -c1-12)
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-terminating"
out="$cache_root/csi-driver/$key"
binary="$out/csi-harness-driver"

if [ -x "$binary" ]; then
  echo "$binary"
  exit 0
fi

command -v go >/dev/null || { echo "build-csi-driver: go is required to build the test CSI driver" >&2; exit 1; }
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$src" "$work/main.go"
cd "$work"
cat > go.mod <<MOD
module csiharnessdriver

go $GO_VERSION

require (
	github.com/container-storage-interface/spec $CSI_SPEC_VERSION
	google.golang.org/grpc $GRPC_VERSION
	k8s.io/kubelet $KUBELET_API_VERSION
)
MOD
export GOFLAGS="-mod=mod -buildvcs=false -trimpath"
export CGO_ENABLED=0
export GOTOOLCHAIN="go$GO_VERSION+auto"
echo "build-csi-driver: resolving modules" >&2
go mod tidy >/dev/null 2>"$work/tidy.log" || { cat "$work/tidy.log" >&2; exit 1; }
echo "build-csi-driver: building csi-harness-driver" >&2
go build -ldflags "-s -w" -o "$binary.tmp" .
mv "$binary.tmp" "$binary"
echo "$binary"
