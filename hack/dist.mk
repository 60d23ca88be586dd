# Single-file executable and Krew distribution; included by the Makefile.
#
#   make dist            build/dist-venv (exact pins) -> PyInstaller -> dist/*.tar.gz + .sha256
#   make krew-manifest   plugin.yaml for the archive at hand (from krew/template.yaml)
#   make krew-install    validate the manifests with krew's validator, install with real krew
#   make smoke           the krew-installed binary through real kubectl, real control plane
#   make bench-startup   median start-up times of the binary next to kubectl's
#
# PyInstaller cannot cross-build: other platforms come from .github/workflows/release.yml,
# which runs the same hack/dist-build.py on native runners.

.PHONY: dist krew-manifest krew-install smoke bench-startup dist-clean

DIST_BUILD := $(PYTHON) hack/dist-build.py
# The archive `make dist` writes for this machine (evaluated only when a target needs it).
DIST_ARCHIVE = $(shell $(DIST_BUILD) --print-archive)
DIST_PY := build/dist-venv/bin/python
# Never the user's own KREW_ROOT: krew-install wipes this directory first.
KREW_SANDBOX := $(CURDIR)/build/krew-root
KREW_CHECK_MANIFEST := build/krew/terminating.yaml
BENCH_RUNS ?= 15

dist:
	$(DIST_BUILD)

# plugin.yaml keeps only this machine's platform, so krew can install it from the local
# archive; the all-platform render only feeds the validator (the release template's shape).
krew-manifest: dist
	$(DIST_PY) krew/generate.py $(DIST_ARCHIVE) -o plugin.yaml
	$(DIST_PY) krew/generate.py --all-platforms $(DIST_ARCHIVE) -o $(KREW_CHECK_MANIFEST)

krew-install: krew-manifest
	KREW_SANDBOX=$(KREW_SANDBOX) bash hack/krew-install.sh plugin.yaml $(DIST_ARCHIVE) $(KREW_CHECK_MANIFEST)

# Not part of `make test` (.ci/run calls it after): it needs the archive built and installed.
smoke: krew-install $(STAMP)
	KREW_ROOT=$(KREW_SANDBOX) $(BIN)/pytest -p no:cacheprovider tests/dist/smoke.py $(PYTEST_ARGS)

bench-startup: dist $(STAMP) control-plane
	$(BIN)/python hack/dist-bench-startup.py --runs $(BENCH_RUNS) build/pyinstaller/dist/kubectl-terminating

dist-clean:
	rm -rf build/dist-venv build/pyinstaller build/krew build/krew-root dist plugin.yaml
