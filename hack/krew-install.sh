#!/usr/bin/env bash
# Validate Krew manifests with krew's own validator, then install the local archive into a
# throw-away KREW_ROOT with a real krew, exactly as a user's `kubectl krew install` would.
#
#   hack/krew-install.sh MANIFEST ARCHIVE [MORE_MANIFESTS_TO_VALIDATE...]
#   KREW_VALIDATE_ONLY=1 hack/krew-install.sh MANIFEST...   # validate, install nothing
#   KREW_BUILD_ONLY=1 hack/krew-install.sh                  # build (or find) krew, nothing more
#
# krew and validate-krew-manifest are built from the Go module proxy, pinned, and cached
# like the control plane (only the first run pays). kubectl comes from
# hack/build-control-plane.sh (cached too). The KREW_ROOT used is KREW_SANDBOX (default
# build/krew-root), never the caller's KREW_ROOT, and it is wiped first. Prints it last.
set -euo pipefail

KREW_VERSION="${KREW_VERSION:-v0.4.4}"
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ "${KREW_BUILD_ONLY:-}" = 1 ]; then
  :
elif [ "${KREW_VALIDATE_ONLY:-}" = 1 ]; then
  manifest="$1" archive=""
  shift
else
  [ $# -ge 2 ] || { echo "usage: $0 MANIFEST ARCHIVE [MANIFEST...]" >&2; exit 2; }
  manifest="$1" archive="$2"
  shift 2
fi
export KREW_ROOT="${KREW_SANDBOX:-$root/build/krew-root}"
marker="$KREW_ROOT/.kubectl-terminating-sandbox"
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-terminating"
tools="$cache_root/krew/$KREW_VERSION"
say() { echo "krew-install: $*" >&2; }

build_krew() {
  [ -x "$tools/kubectl-krew" ] && [ -x "$tools/validate-krew-manifest" ] && return
  command -v go >/dev/null || { say "go is required to build krew"; exit 1; }
  mkdir -p "$tools"
  local work
  work=$(mktemp -d)
  # `go install pkg@version` would ask the proxy for the module's version list, which it
  # may refuse; a throw-away module that requires the exact version only needs that one.
  (
    cd "$work"
    printf 'module krewbuild\n\ngo 1.20\n\nrequire sigs.k8s.io/krew %s\n' "$KREW_VERSION" > go.mod
    printf '//go:build tools\n\npackage tools\n\nimport (\n\t_ "sigs.k8s.io/krew/cmd/krew"\n\t_ "sigs.k8s.io/krew/cmd/validate-krew-manifest"\n)\n' > tools.go
    export GOFLAGS="-mod=mod -buildvcs=false -trimpath" CGO_ENABLED=0
    say "building krew $KREW_VERSION from the Go module proxy"
    go mod tidy >/dev/null 2>tidy.log || { cat tidy.log >&2; exit 1; }
    # krew reads its own version from these variables (release builds set them the same way).
    go build -ldflags "-s -w -X sigs.k8s.io/krew/internal/version.gitTag=$KREW_VERSION -X sigs.k8s.io/krew/internal/version.gitCommit=$KREW_VERSION" \
      -o "$tools/kubectl-krew.tmp" sigs.k8s.io/krew/cmd/krew
    go build -ldflags "-s -w" -o "$tools/validate-krew-manifest.tmp" sigs.k8s.io/krew/cmd/validate-krew-manifest
  )
  rm -rf "$work"
  mv "$tools/kubectl-krew.tmp" "$tools/kubectl-krew"
  mv "$tools/validate-krew-manifest.tmp" "$tools/validate-krew-manifest"
}

if [ "${KREW_BUILD_ONLY:-}" = 1 ]; then
  build_krew
  echo "$tools"
  exit 0
fi

validate() {
  # The validator insists that the file is named after the plugin: terminating.yaml.
  local dir
  dir=$(mktemp -d)
  cp "$1" "$dir/terminating.yaml"
  # -skip-install: its install step would download the release URIs; we install below,
  # from the local archive, with the same krew.
  if ! "$tools/validate-krew-manifest" -manifest "$dir/terminating.yaml" -skip-install 2>"$dir/log"; then
    cat "$dir/log" >&2
    say "$1 is not a valid krew manifest"
    exit 1
  fi
  rm -rf "$dir"
  say "$1: valid (validate-krew-manifest $KREW_VERSION)"
}

build_krew
for m in "$manifest" "$@"; do validate "$m"; done
[ -z "$archive" ] && exit 0

kubectl_dir=$(bash "$root/hack/build-control-plane.sh" | tail -n 1)
export PATH="$KREW_ROOT/bin:$tools:$kubectl_dir:$PATH"
export KREW_NO_UPGRADE_CHECK=1   # no network beyond the archive we hand it

# Wipe only a directory this script made (or none): never somebody's real krew.
if [ -e "$KREW_ROOT" ] && [ ! -e "$marker" ]; then
  say "$KREW_ROOT exists and is not a sandbox made by this script; not touching it"
  exit 1
fi
rm -rf "$KREW_ROOT"
mkdir -p "$KREW_ROOT" && touch "$marker"
say "kubectl krew install --manifest=$manifest --archive=$archive (KREW_ROOT=$KREW_ROOT)"
kubectl krew install --manifest="$manifest" --archive="$archive"

# What krew made of it: the link on PATH, the helper and the licence next to the binary.
version=$(sed -n 's/^  version: //p' "$manifest")
store="$KREW_ROOT/store/terminating/$version"
for f in LICENSE kubectl_complete-terminating; do
  [ -f "$store/$f" ] || { say "$f missing from $store"; exit 1; }
done
got=$(kubectl terminating --version)
[ "$got" = "kubectl terminating ${version#v}" ] || { say "unexpected version: $got"; exit 1; }
say "installed: $(command -v kubectl-terminating) -> $got"
echo "$KREW_ROOT"
