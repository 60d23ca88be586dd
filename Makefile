# kubectl-terminating: everything a newcomer or CI needs goes through these targets.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DIR ?= .demo
PYTEST_ARGS ?=

.PHONY: help venv lint test unit e2e fuzz demo demo-down control-plane clean

help:
	@echo "make test      lint + unit + end-to-end tests (builds the test control plane once)"
	@echo "make demo      start a local control plane with stuck pods/namespaces and explain them"
	@echo "make demo-down stop the demo control plane and its real node"
	@echo "make lint      ruff (check and format) + mypy --strict"
	@echo "make fuzz      the property tests with random seeds and 25 times the examples (CI's are fixed)"
	@echo "make dist      the single-file executable and its archive (dist/)"
	@echo "make krew-install  install that archive with real krew into build/krew-root"
	@echo "make smoke     the krew-installed binary through real kubectl (CI runs it after test)"
	@echo "make bench-startup  start-up times of the binary next to kubectl's"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check kubectl_terminating tests hack
	$(BIN)/ruff format --check kubectl_terminating tests hack
	$(BIN)/mypy --strict

control-plane:
	bash hack/build-control-plane.sh

unit: $(STAMP)
	$(BIN)/pytest -m "not e2e" $(PYTEST_ARGS)

e2e: $(STAMP) control-plane
	$(BIN)/pytest -m e2e $(PYTEST_ARGS)

# CI runs the property tests derandomized (tests/profiles.py); exploring is this target's job.
# A failure it finds is printed with its reproduce blob and kept in .hypothesis/ to replay.
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/pytest -m "hypothesis and not e2e" --hypothesis-show-statistics $(PYTEST_ARGS)

test: lint $(STAMP) control-plane
	$(BIN)/pytest $(PYTEST_ARGS)

demo: $(STAMP) control-plane
	$(BIN)/python -m tests.harness.demo up --state-dir $(DEMO_DIR)

demo-down: $(STAMP)
	$(BIN)/python -m tests.harness.demo down --state-dir $(DEMO_DIR)

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
#                                           WATCH_PODS=20000 pods (WATCH_SECONDS=60)
#   make bench-bignode                      one live virtual-kubelet node holding 90% of 5,000
#                                           and 50,000 pods, 5 stuck on it (BIGNODE_SIZES=5000)
.PHONY: bench bench-pods bench-outage bench-bignode bench-exporter bench-fleet bench-watch
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
	WATCH_PODS="$(WATCH_PODS)" WATCH_SECONDS="$(WATCH_SECONDS)" $(BIN)/python -m hack.bench.watchidle

bench-bignode: $(STAMP) control-plane
	BENCH_SCENARIO=bignode BIGNODE_SIZES="$(BIGNODE_SIZES)" REPEAT="$(REPEAT)" \
	BENCH_BIN="$(BENCH_BIN)" BENCH_DIR=.bench/bignode $(BIN)/python -m hack.bench
