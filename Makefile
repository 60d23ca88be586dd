# kubectl-terminating: everything a newcomer or CI needs goes through these targets.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DIR ?= .demo
PYTEST_ARGS ?=
# Test files run on this many pytest-xdist workers, a file to a worker and a control plane
# each (tests/conftest.py), each worker's files in the order one process runs them (not the
# biggest first: a file then meets only what the files before it left on its API server). The
# e2e files mostly wait on their API servers, so two pay on two cores (docs/development.md,
# "CI time"). WORKERS=0 runs them in pytest's own process (`-s`, a debugger).
WORKERS ?= 2
XDIST := -n $(WORKERS) --dist loadgroup --no-loadscope-reorder

.PHONY: help venv lint test test-matrix unit e2e fuzz test-k9s test-headlamp demo demo-down control-plane \
	clean deploy-manifests matrix-control-planes prebuild

help:
	@echo "make test      lint + unit + end-to-end tests (builds the test control plane once)"
	@echo "make test-matrix  the end-to-end scenarios on the oldest and newest Kubernetes tested"
	@echo "make prebuild  helm, the matrix control planes and krew (CI builds them beside make test)"
	@echo "make test-k9s  the k9s plugin in a real k9s in tmux (builds k9s once: ~11 min cold)"
	@echo "make test-headlamp  the Headlamp plugin: vitest, build, its components in chromium against serve"
	@echo "make demo      start a local control plane with stuck pods/namespaces and explain them"
	@echo "make demo-down stop the demo control plane and its real node"
	@echo "make lint      ruff (check and format) + mypy --strict"
	@echo "make deploy-manifests  render deploy/*.yaml from the Helm chart deploy/chart"
	@echo "make fuzz      the property tests with random seeds and 25 times the examples (CI's are fixed)"
	@echo "make dist      the single-file executable and its archive (dist/)"
	@echo "make krew-install  install that archive with real krew into build/krew-root"
	@echo "make smoke     the krew-installed binary through real kubectl (CI runs it after test)"
	@echo "make bench-startup  start-up times of the binary next to kubectl's"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	@# setuptools tells every editable install of a flat layout to mind same-named folders: an
	@# information block, the first screen a newcomer would read; the tool's output comes first
	PYTHONWARNINGS="ignore:Editable installation" $(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check kubectl_terminating tests hack
	$(BIN)/ruff format --check kubectl_terminating tests hack
	$(BIN)/mypy --strict

control-plane:
	bash hack/build-control-plane.sh

unit: $(STAMP)
	$(BIN)/pytest -m "not e2e" $(XDIST) $(PYTEST_ARGS)

e2e: $(STAMP) control-plane
	$(BIN)/pytest -m "e2e and not k9s and not headlamp" $(XDIST) $(PYTEST_ARGS)

# CI runs the property tests derandomized (tests/profiles.py); exploring is this target's job.
# A failure it finds is printed with its reproduce blob and kept in .hypothesis/ to replay.
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/pytest -m "hypothesis and not e2e" --hypothesis-show-statistics $(PYTEST_ARGS)

test: lint $(STAMP) control-plane
	$(BIN)/pytest -m "not k9s and not headlamp" $(XDIST) $(PYTEST_ARGS)

# The k9s plugin in a real k9s, in tmux (tests/e2e/test_k9s.py). Its own target: building k9s
# took 10m44s cold on a loaded 2-core machine (2.3 GB of modules). tmux and less come from
# apt-get where missing (root only).
test-k9s: $(STAMP) control-plane
	bash hack/build-go-tool.sh k9s
	@missing=; for tool in tmux less; do command -v $$tool >/dev/null || missing="$$missing $$tool"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	  else echo "test-k9s needs:$$missing" >&2; exit 1; fi; \
	fi
	$(BIN)/pytest -m k9s tests/e2e/test_k9s.py $(PYTEST_ARGS)

# The Headlamp plugin (integrations/headlamp): npm ci of the pinned @kinvolk/headlamp-plugin
# (once per package-lock.json), tsc, its vitest tests, the plugin's build (dist/main.js), the
# Storybook build its tooling ships, then its components in Debian's chromium (playwright-core,
# installed with apt-get by tests/harness/browser.py when missing) against a real serve
# (tests/e2e/test_headlamp.py). Its own target: cold (npm ci + Storybook build) it took about
# 20 min on the loaded 2-core machine. HEADLAMP_SCREENSHOT=docs/img/headlamp-section.png keeps
# the section's picture.
HEADLAMP := integrations/headlamp

$(HEADLAMP)/node_modules/.installed: $(HEADLAMP)/package-lock.json
	cd $(HEADLAMP) && npm ci --no-audit --no-fund
	touch $@

$(HEADLAMP)/storybook-static/.built: $(HEADLAMP)/node_modules/.installed $(wildcard $(HEADLAMP)/src/*.ts* $(HEADLAMP)/src/stories/*)
	cd $(HEADLAMP) && npx headlamp-plugin storybook-build
	touch $@

test-headlamp: $(STAMP) control-plane $(HEADLAMP)/node_modules/.installed
	cd $(HEADLAMP) && npx headlamp-plugin tsc && npx headlamp-plugin test && npx headlamp-plugin build
	$(MAKE) $(HEADLAMP)/storybook-static/.built
	$(BIN)/pytest -m headlamp tests/e2e/test_headlamp.py $(PYTEST_ARGS)

# The e2e scenarios (tests/conftest.py MATRIX) on the oldest and the newest Kubernetes the Go
# module proxy lets hack/build-control-plane.sh build, besides the v1.36.3 of `make test`; each
# version builds kube-apiserver and kube-controller-manager only (etcd and kubectl are copied
# from v1.36.3's, built first), cached by version. CI runs it.
MATRIX_VERSIONS ?= v1.30.14 v1.37.2
MATRIX_BINARIES := etcd kube-apiserver kube-controller-manager kubectl

matrix-control-planes: control-plane
	@set -e; for v in $(MATRIX_VERSIONS); do \
	  K8S_VERSION=$$v BINARIES="$(MATRIX_BINARIES)" bash hack/build-control-plane.sh >/dev/null; \
	done

# Each version's tests start once its binaries are there: the first version's run while
# .ci/run's background build makes the next one (the build script takes a lock per version).
test-matrix: $(STAMP) control-plane
	@set -e; for v in $(MATRIX_VERSIONS); do \
	  K8S_VERSION=$$v BINARIES="$(MATRIX_BINARIES)" bash hack/build-control-plane.sh >/dev/null; \
	  echo "make test-matrix: Kubernetes $$v"; \
	  K8S_VERSION=$$v $(BIN)/pytest -m e2e $(XDIST) $(PYTEST_ARGS) tests/e2e; \
	done

# What CI builds beside `make test`'s pytest (.ci/run): helm (make test's helm tests), the
# matrix's control planes, krew (make smoke). Each is cached: a no-op once built.
prebuild: control-plane
	bash hack/build-go-tool.sh helm >/dev/null
	$(MAKE) --no-print-directory matrix-control-planes
	KREW_BUILD_ONLY=1 bash hack/krew-install.sh >/dev/null

demo: $(STAMP) control-plane
	$(BIN)/python -m tests.harness.demo up --state-dir $(DEMO_DIR)

demo-down: $(STAMP)
	$(BIN)/python -m tests.harness.demo down --state-dir $(DEMO_DIR)

# deploy/*.yaml from deploy/chart, their one source (builds helm once, cached)
deploy-manifests:
	bash hack/render-deploy.sh

clean:
	rm -rf $(VENV) build dist .mypy_cache .ruff_cache .pytest_cache

# Single-file executable and Krew distribution (issue: dist/krew): targets live in their own file.
include hack/dist.mk

# --- Benchmark (issue: pods and namespaces at scale) --------------------------------------------
# make bench: a fresh control plane in .bench/ (stopped at the end, Ctrl-C included) is filled
# with realistic pods, stuck pods, M terminating namespaces and K CRD types; kubectl terminating
# is timed next to the kubectl pipelines; the table goes to stdout and .bench/report.md.
#   make bench N=50000                     sizes 2000,5000,20000,50000 (BENCH_SIZES=a,b,c to pick)
#   make bench M=40 K=300 REPEAT=3          more terminating namespaces, more CRD types, fewer runs
#   make bench BENCH_BIN=dist/...           measure another executable (the single-file build)
#   make bench-outage                       the mass outage alone: 2,000 and 20,000 pods stuck on
#                                           20 and 200 dead nodes among 20,000 and 50,000 healthy
#                                           (OUTAGE_SIZES=20000:2000,50000:20000 to pick)
#   make bench-exporter                     `serve`'s memory and CPU with 20,000 healthy pods and
#                                           2,000 stuck (EXPORTER_SIZES=20000:2000, EXPORTER_RUNS=5)
#   make bench-fleet                        --all-contexts over FLEET_N=3 control planes next to
#                                           each context alone (FLEET_PODS, FLEET_STUCK per cluster)
#   make bench-watch                        pods -A -w: requests and CPU over a quiet minute on
#                                           WATCH_PODS=20000 pods (WATCH_SECONDS=60);
#                                           WATCH_COMMAND=serve: serve's watches the same way
#   make bench-bignode                      one live virtual-kubelet node holding 90% of 5,000
#                                           and 50,000 pods, 5 stuck on it (BIGNODE_SIZES=5000)
#   make soak                               `serve` for 10 minutes through restarts, a 410 Gone,
#                                           a discovery outage and 50 changes (SOAK_SECONDS=600)
#   make bench-preflight                    `preflight ns A` next to `ns B --explain`, same content
#                                           (PREFLIGHT_N=5000 objects in 30 types each)
.PHONY: bench bench-pods bench-outage bench-bignode bench-exporter bench-fleet bench-watch bench-preflight soak
bench: bench-pods bench-outage bench-bignode bench-exporter bench-fleet bench-watch

bench-pods: $(STAMP) control-plane
	BENCH_SIZES="$(BENCH_SIZES)" N="$(N)" M="$(M)" K="$(K)" REPEAT="$(REPEAT)" \
	BENCH_BIN="$(BENCH_BIN)" $(BIN)/python -m hack.bench

bench-outage: $(STAMP) control-plane
	BENCH_SCENARIO=outage OUTAGE_SIZES="$(OUTAGE_SIZES)" REPEAT="$(REPEAT)" \
	BENCH_BIN="$(BENCH_BIN)" BENCH_DIR=.bench/outage $(BIN)/python -m hack.bench

bench-exporter: $(STAMP) control-plane
	BENCH_SCENARIO=exporter EXPORTER_SIZES="$(EXPORTER_SIZES)" EXPORTER_RUNS="$(EXPORTER_RUNS)" \
	BENCH_BIN="$(BENCH_BIN)" BENCH_DIR=.bench/exporter $(BIN)/python -m hack.bench

bench-fleet: $(STAMP) control-plane
	FLEET_N="$(FLEET_N)" FLEET_PODS="$(FLEET_PODS)" FLEET_STUCK="$(FLEET_STUCK)" REPEAT="$(REPEAT)" \
	$(BIN)/python -m hack.bench.fleet

bench-watch: $(STAMP) control-plane
	WATCH_COMMAND="$(WATCH_COMMAND)" WATCH_PODS="$(WATCH_PODS)" WATCH_SECONDS="$(WATCH_SECONDS)" $(BIN)/python -m hack.bench.watchidle

# `serve` for 10 minutes through API server restarts, a 410 Gone, a discovery outage and 50
# objects that start and stop terminating (hack/bench/soak.py): flat memory, current metrics,
# every thread alive, or exit 1. Not part of `make test` (it takes about 15 minutes).
soak: $(STAMP) control-plane
	SOAK_SECONDS="$(SOAK_SECONDS)" SOAK_PODS="$(SOAK_PODS)" SOAK_OBJECTS="$(SOAK_OBJECTS)" \
	$(BIN)/python -m hack.bench.soak

bench-preflight: $(STAMP) control-plane
	PREFLIGHT_N="$(PREFLIGHT_N)" REPEAT="$(REPEAT)" $(BIN)/python -m hack.bench.preflight

bench-bignode: $(STAMP) control-plane
	BENCH_SCENARIO=bignode BIGNODE_SIZES="$(BIGNODE_SIZES)" REPEAT="$(REPEAT)" \
	BENCH_BIN="$(BENCH_BIN)" BENCH_DIR=.bench/bignode $(BIN)/python -m hack.bench
