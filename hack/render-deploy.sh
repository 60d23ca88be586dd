#!/usr/bin/env bash
# Renders deploy/'s plain manifests from deploy/chart, their one source: edit the chart, then
# `make deploy-manifests`. tests/e2e/test_helm.py fails when a committed file differs.
#   bash hack/render-deploy.sh [OUT_DIR]      (default: deploy; HELM: a helm binary to use)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-deploy}"
helm="${HELM:-$(bash hack/build-go-tool.sh helm)}"
ns=kubectl-terminating
render() { "$helm" template kubectl-terminating deploy/chart --namespace "$ns" "$@"; }

{
  cat <<HEADER
# kubectl terminating as a Prometheus exporter: \`kubectl apply -f deploy/kubectl-terminating.yaml\`
# (docs/integrations.md). Rendered from deploy/chart by \`make deploy-manifests\`: edit the
# chart, never this file (or install the chart itself with helm). Build the image from this
# repository's Dockerfile, push it where the cluster pulls from, then set its name below.
apiVersion: v1
kind: Namespace
metadata:
  name: $ns
HEADER
  render
} >"$out/kubectl-terminating.yaml"

{
  cat <<'HEADER'
# Example alerts for the Prometheus Operator (its PrometheusRule CRD); for a plain Prometheus
# the rules file is deploy/chart/files/prometheus-rules.yaml. Rendered from deploy/chart by
# `make deploy-manifests` (the chart's prometheusRule.enabled=true): edit the chart.
HEADER
  render --set prometheusRule.enabled=true --show-only templates/prometheusrule.yaml
} >"$out/prometheus-rule.yaml"
