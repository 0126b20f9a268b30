#!/usr/bin/env bash
# Checks the Helm chart deploy/helm/atrium, failing on any error: helm lint
# and helm template with the default values and with the production-like
# ci/production-values.yaml, kubeconform validation of every rendered
# manifest against the offline Kubernetes schemas, then the chart tests
# (tools/chartcheck). Run by make chart-check, which builds HELM,
# KUBECONFORM and the static binaries the tests read flags from.
#
# The schemas are in ../shared/k8s-schemas beside the checkout; a clone
# made elsewhere (such as /tmp/ci) finds them beside the repository it was
# cloned from, or set K8S_SCHEMAS.
set -euo pipefail
cd "$(dirname "$0")/.."

HELM=$(realpath "${HELM:-.bin/helm}")
KUBECONFORM=$(realpath "${KUBECONFORM:-.bin/kubeconform}")
BIN_DIR=$(realpath "${ATRIUM_BIN_DIR:-.bin/static}")
chart=deploy/helm/atrium
# The schemas are of Kubernetes 1.24, the oldest version the chart supports.
kube_version=1.24.0

schemas=${K8S_SCHEMAS:-../shared/k8s-schemas}
if [ -z "${K8S_SCHEMAS:-}" ] && [ ! -d "$schemas" ]; then
  origin=$(git remote get-url origin 2>/dev/null || true)
  if [ -n "$origin" ] && [ -d "$origin/../shared/k8s-schemas" ]; then
    schemas=$origin/../shared/k8s-schemas
  fi
fi
if [ ! -f "$schemas/deployment-apps-v1.json" ]; then
  echo "chart-check: no Kubernetes schemas in $schemas; set K8S_SCHEMAS to the k8s-schemas folder" >&2
  exit 1
fi

rendered=$(mktemp -d)
trap 'rm -rf "$rendered"' EXIT
for values in default ci/production-values.yaml; do
  args=()
  if [ "$values" != default ]; then args=(--values "$chart/$values"); fi
  echo "chart-check: $values values"
  "$HELM" lint --strict --kube-version "$kube_version" "$chart" "${args[@]}"
  out="$rendered/$(basename "$values" .yaml).yaml"
  "$HELM" template atrium "$chart" --namespace atrium --kube-version "$kube_version" "${args[@]}" >"$out"
  "$KUBECONFORM" -strict -summary -schema-location "$schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$out"
done

echo "chart-check: chart tests"
(cd tools && GOWORK=off go vet ./chartcheck/ && GOWORK=off HELM="$HELM" ATRIUM_BIN_DIR="$BIN_DIR" go test -count=1 ./chartcheck/)
