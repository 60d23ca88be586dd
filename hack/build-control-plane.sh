#!/usr/bin/env bash
# Builds the test control plane (etcd, kube-apiserver, kube-controller-manager, kubectl, and the
# kubelet of the harness's real node)
# from the Go module proxy and caches the binaries by version, so only the first run pays.
# Prints the directory that holds the binaries.
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.8}"
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-terminating"
out="$cache_root/control-plane/k8s-$K8S_VERSION-etcd-$ETCD_VERSION"
binaries=(etcd kube-apiserver kube-controller-manager kubectl kubelet)

all_present() {
  for b in "${binaries[@]}"; do [ -x "$out/$b" ] || return 1; done
}

if all_present; then
  echo "$out"
  exit 0
fi

command -v go >/dev/null || { echo "build-control-plane: go is required to build the test control plane" >&2; exit 1; }
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

minor="${K8S_VERSION#v1.}"  # 36.3 -> staging modules are v0.36.3
staging="v0.$minor"
export GOFLAGS="-mod=mod -buildvcs=false -trimpath"
export CGO_ENABLED=0

echo "build-control-plane: fetching k8s.io/kubernetes $K8S_VERSION" >&2
go mod download -json "k8s.io/kubernetes@$K8S_VERSION" >/dev/null
k8s_mod="$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/$K8S_VERSION.mod"
# The toolchain Kubernetes asks for (its go.mod "go" line); GOTOOLCHAIN fetches it if newer.
go_line=$(awk '/^go [0-9]/{print $2; exit}' "$k8s_mod")

{
  echo "module controlplanebuild"
  echo "go $go_line"
  echo "require k8s.io/kubernetes $K8S_VERSION"
  echo "require go.etcd.io/etcd/server/v3 $ETCD_VERSION"
  # k8s.io/kubernetes points its staging modules at local paths; use the published ones.
  sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#replace \1 => \1 '"$staging"'#p' "$k8s_mod"
} > go.mod
cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
GO

export GOTOOLCHAIN="go$go_line+auto"
echo "build-control-plane: resolving modules (go $go_line)" >&2
go mod tidy -e >/dev/null 2>"$work/tidy.log" || { cat "$work/tidy.log" >&2; exit 1; }
for target in go.etcd.io/etcd/server/v3:etcd \
              k8s.io/kubernetes/cmd/kube-apiserver:kube-apiserver \
              k8s.io/kubernetes/cmd/kube-controller-manager:kube-controller-manager \
              k8s.io/kubernetes/cmd/kubectl:kubectl \
              k8s.io/kubernetes/cmd/kubelet:kubelet; do
  pkg="${target%%:*}"; name="${target##*:}"
  [ -x "$out/$name" ] && continue
  echo "build-control-plane: building $name" >&2
  go build -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION" -o "$out/$name.tmp" "$pkg"
  mv "$out/$name.tmp" "$out/$name"
done
echo "$out"
