#!/usr/bin/env bash
# Builds the test control plane (etcd, kube-apiserver, kube-controller-manager, kubectl, and the
# kubelet of the harness's real node)
# from the Go module proxy and caches the binaries by version, so only the first run pays.
# Prints the directory that holds the binaries.
#   K8S_VERSION=v1.31.0 bash hack/build-control-plane.sh     another Kubernetes (make test-matrix)
#   BINARIES="etcd kube-apiserver kube-controller-manager kubectl"   only these (no kubelet)
# etcd depends on ETCD_VERSION alone: one built for another Kubernetes is copied, not rebuilt.
# kubectl for another Kubernetes is the pinned version's, copied when that is built (the tests
# drive every server with one kubectl, as the harness's setup only): a matrix version then
# builds kube-apiserver and kube-controller-manager alone.
set -euo pipefail

PINNED_VERSION=v1.36.3
K8S_VERSION="${K8S_VERSION:-$PINNED_VERSION}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.8}"
read -r -a binaries <<< "${BINARIES:-etcd kube-apiserver kube-controller-manager kubectl kubelet}"
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-terminating"
out="$cache_root/control-plane/k8s-$K8S_VERSION-etcd-$ETCD_VERSION"

wanted() {
  local b
  for b in "${binaries[@]}"; do [ "$b" = "$1" ] && return 0; done
  return 1
}

all_present() {
  local b
  for b in "${binaries[@]}"; do [ -x "$out/$b" ] || return 1; done
}

for b in "${binaries[@]}"; do
  case "$b" in
    etcd|kube-apiserver|kube-controller-manager|kubectl|kubelet) ;;
    *) echo "build-control-plane: unknown binary '$b' in BINARIES" >&2; exit 2 ;;
  esac
done

if all_present; then
  echo "$out"
  exit 0
fi

mkdir -p "$out"
# One build of a version at a time: `make test-matrix` asking for a version that .ci/run's
# background `make prebuild` is building waits for it and finds the binaries.
if command -v flock >/dev/null; then
  exec 9>"$cache_root/control-plane/.k8s-$K8S_VERSION.lock"
  flock 9
  if all_present; then
    echo "$out"
    exit 0
  fi
fi
# copy_from NAME CANDIDATE...: the first executable candidate, copied as $out/NAME
copy_from() {
  local name=$1 other
  shift
  for other in "$@"; do
    if [ -x "$other" ]; then
      cp "$other" "$out/$name.tmp" && mv "$out/$name.tmp" "$out/$name"
      echo "build-control-plane: $name copied from ${other%/*}" >&2
      return 0
    fi
  done
}
if wanted etcd && [ ! -x "$out/etcd" ]; then
  copy_from etcd "$cache_root"/control-plane/k8s-*-etcd-"$ETCD_VERSION"/etcd
fi
if wanted kubectl && [ ! -x "$out/kubectl" ] && [ "$K8S_VERSION" != "$PINNED_VERSION" ]; then
  copy_from kubectl "$cache_root"/control-plane/k8s-"$PINNED_VERSION"-etcd-*/kubectl
fi
if all_present; then
  echo "$out"
  exit 0
fi

command -v go >/dev/null || { echo "build-control-plane: go is required to build the test control plane" >&2; exit 1; }
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

# k8s.io/kubernetes points its staging modules at local paths; use the published ones. The
# proxy may serve a module's go.mod but not its source (k8s.io/endpointslice@v0.32.13): name it.
missing=()
while read -r module; do
  [[ "$module" == k8s.io/sample-* ]] && continue  # examples, never imported by the binaries
  go mod download "$module@$staging" >/dev/null 2>&1 || missing+=("$module@$staging")
done < <(sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$k8s_mod")
if [ "${#missing[@]}" -gt 0 ]; then
  echo "build-control-plane: Kubernetes $K8S_VERSION cannot be built: the Go module proxy does not serve ${missing[*]}" >&2
  exit 1
fi

# etcd, when it must be built, is a module of its own: built beside an older Kubernetes, its
# newer client libraries would be forced on that Kubernetes's code.
targets=()
imports=()
{
  echo "module controlplanebuild"
  echo "go $go_line"
  echo "require k8s.io/kubernetes $K8S_VERSION"
  sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#replace \1 => \1 '"$staging"'#p' "$k8s_mod"
} > go.mod
for name in kube-apiserver kube-controller-manager kubectl kubelet; do
  if wanted "$name" && [ ! -x "$out/$name" ]; then
    targets+=("k8s.io/kubernetes/cmd/$name:$name")
    imports+=("	_ \"k8s.io/kubernetes/cmd/$name\"")
  fi
done
if [ "${#targets[@]}" -gt 0 ]; then
  printf '//go:build tools\n\npackage tools\n\nimport (\n%s\n)\n' "$(printf '%s\n' "${imports[@]}")" > tools.go
  echo "build-control-plane: resolving modules (go $go_line)" >&2
  GOTOOLCHAIN="go$go_line+auto" go mod tidy -e >/dev/null 2>"$work/tidy.log" \
    || { cat "$work/tidy.log" >&2; exit 1; }
fi

if wanted etcd && [ ! -x "$out/etcd" ]; then
  mkdir "$work/etcd"
  go mod download -json "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >/dev/null
  etcd_mod="$(go env GOMODCACHE)/cache/download/go.etcd.io/etcd/server/v3/@v/$ETCD_VERSION.mod"
  # the newer of etcd's toolchain and Kubernetes's: no second download for the pinned version
  etcd_go=$(printf '%s\n' "$go_line" "$(awk '/^go [0-9]/{print $2; exit}' "$etcd_mod")" \
    | sort -V | tail -n 1)
  printf 'module etcdbuild\ngo %s\nrequire go.etcd.io/etcd/server/v3 %s\n' "$etcd_go" "$ETCD_VERSION" \
    > "$work/etcd/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' \
    > "$work/etcd/tools.go"
  echo "build-control-plane: building etcd $ETCD_VERSION" >&2
  (
    cd "$work/etcd"
    export GOTOOLCHAIN="go$etcd_go+auto"
    go mod tidy -e >/dev/null 2>"$work/etcd-tidy.log" || { cat "$work/etcd-tidy.log" >&2; exit 1; }
    go build -ldflags "-s -w" -o "$out/etcd.tmp" go.etcd.io/etcd/server/v3
  )
  mv "$out/etcd.tmp" "$out/etcd"
fi

export GOTOOLCHAIN="go$go_line+auto"
if [ "${#targets[@]}" -gt 0 ]; then
  # One `go build` for every binary: the package graph is loaded once and the links overlap.
  names=("${targets[@]##*:}")
  echo "build-control-plane: building ${names[*]}" >&2
  mkdir "$work/bin"
  go build -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION" -o "$work/bin/" "${targets[@]%%:*}"
  for name in "${names[@]}"; do
    mv "$work/bin/$name" "$out/$name.tmp" && mv "$out/$name.tmp" "$out/$name"
  done
fi
echo "$out"
