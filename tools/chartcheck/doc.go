// Package chartcheck tests the Helm chart in deploy/helm/atrium: it renders
// the chart with helm, as an operator would, and checks what a platform team
// relies on (secrets only by reference, the admin listener never public,
// locked-down pods, probes, NetworkPolicies, the migration hook) and that
// every setting it renders is one the binaries read.
//
// It lives in the tools module because that module already pins helm and
// the Kubernetes API types, which the Atrium modules must not depend on.
// make chart-check runs it with the helm binary (HELM) and the static
// binaries (ATRIUM_BIN_DIR) it has just built.
package chartcheck
