package chartcheck

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

const (
	chartDir       = "../../deploy/helm/atrium"
	productionFile = chartDir + "/ci/production-values.yaml"
	// kubeVersion is the cluster version the chart is rendered for; the
	// offline schemas make chart-check validates against are of 1.24.
	kubeVersion = "1.24.0"
)

// components are the chart's Deployments, each running atrium-<component>.
var components = []string{"gateway", "collections", "crm", "data", "actions", "webhooks", "audit"}

// services are the five gRPC services.
var services = []string{"collections", "crm", "data", "actions", "webhooks", "audit"}

// manifests is one rendering of the chart, by kind and name.
type manifests struct {
	deployments     map[string]*appsv1.Deployment
	services        map[string]*corev1.Service
	configMaps      map[string]*corev1.ConfigMap
	serviceAccounts map[string]*corev1.ServiceAccount
	hpas            map[string]*autoscalingv2.HorizontalPodAutoscaler
	pdbs            map[string]*policyv1.PodDisruptionBudget
	policies        map[string]*networkingv1.NetworkPolicy
	ingresses       map[string]*networkingv1.Ingress
	claims          map[string]*corev1.PersistentVolumeClaim
	jobs            map[string]*batchv1.Job
	kinds           []string
}

func helmPath(t *testing.T) string {
	t.Helper()
	p := os.Getenv("HELM")
	if p == "" {
		p = "../../.bin/helm"
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("helm not found at %s (set HELM, or run make chart-check, which builds .bin/helm): %v", p, err)
	}
	return p
}

// helmTemplate runs helm template with args after the chart and returns its
// standard output and standard error.
func helmTemplate(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	full := append([]string{"template", "atrium", chartDir, "--namespace", "atrium", "--kube-version", kubeVersion}, args...)
	cmd := exec.Command(helmPath(t), full...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// render renders the chart with args and decodes every manifest.
func render(t *testing.T, args ...string) *manifests {
	t.Helper()
	out, stderr, err := helmTemplate(t, args...)
	if err != nil {
		t.Fatalf("helm template %v: %v\n%s", args, err, stderr)
	}
	m := &manifests{
		deployments: map[string]*appsv1.Deployment{}, services: map[string]*corev1.Service{},
		configMaps: map[string]*corev1.ConfigMap{}, serviceAccounts: map[string]*corev1.ServiceAccount{},
		hpas: map[string]*autoscalingv2.HorizontalPodAutoscaler{}, pdbs: map[string]*policyv1.PodDisruptionBudget{},
		policies: map[string]*networkingv1.NetworkPolicy{}, ingresses: map[string]*networkingv1.Ingress{},
		claims: map[string]*corev1.PersistentVolumeClaim{}, jobs: map[string]*batchv1.Job{},
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(out)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			t.Fatalf("rendered manifest is not YAML: %v\n%s", err, doc)
		}
		if head.Kind == "" {
			continue
		}
		m.kinds = append(m.kinds, head.Kind)
		name := head.Metadata.Name
		switch head.Kind {
		case "Deployment":
			m.deployments[name] = decode[appsv1.Deployment](t, doc)
		case "Service":
			m.services[name] = decode[corev1.Service](t, doc)
		case "ConfigMap":
			m.configMaps[name] = decode[corev1.ConfigMap](t, doc)
		case "ServiceAccount":
			m.serviceAccounts[name] = decode[corev1.ServiceAccount](t, doc)
		case "HorizontalPodAutoscaler":
			m.hpas[name] = decode[autoscalingv2.HorizontalPodAutoscaler](t, doc)
		case "PodDisruptionBudget":
			m.pdbs[name] = decode[policyv1.PodDisruptionBudget](t, doc)
		case "NetworkPolicy":
			m.policies[name] = decode[networkingv1.NetworkPolicy](t, doc)
		case "Ingress":
			m.ingresses[name] = decode[networkingv1.Ingress](t, doc)
		case "PersistentVolumeClaim":
			m.claims[name] = decode[corev1.PersistentVolumeClaim](t, doc)
		case "Job":
			m.jobs[name] = decode[batchv1.Job](t, doc)
		default:
			t.Errorf("unexpected kind %s (%s) rendered", head.Kind, name)
		}
	}
	return m
}

// decode decodes doc strictly: a field the API type lacks is an error.
func decode[T any](t *testing.T, doc []byte) *T {
	t.Helper()
	v := new(T)
	if err := yaml.UnmarshalStrict(doc, v); err != nil {
		t.Fatalf("manifest does not decode as %T: %v\n%s", v, err, doc)
	}
	return v
}

// deployment returns the Deployment of component.
func (m *manifests) deployment(t *testing.T, component string) *appsv1.Deployment {
	t.Helper()
	d, ok := m.deployments["atrium-"+component]
	if !ok {
		t.Fatalf("no Deployment atrium-%s", component)
	}
	return d
}

// env returns the environment a container sees: its ConfigMap's variables
// overlaid by its own env entries, the secret references as "secret:<name>/<key>".
func (m *manifests) env(t *testing.T, c corev1.Container) map[string]string {
	t.Helper()
	vars := map[string]string{}
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef == nil {
			t.Fatalf("container %s: envFrom other than a ConfigMap: %+v", c.Name, from)
		}
		cm, ok := m.configMaps[from.ConfigMapRef.Name]
		if !ok {
			t.Fatalf("container %s reads ConfigMap %s, which the chart does not render", c.Name, from.ConfigMapRef.Name)
		}
		for k, v := range cm.Data {
			vars[k] = v
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			vars[e.Name] = "secret:" + e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		case e.ValueFrom != nil:
			t.Fatalf("container %s: %s from something else than a Secret: %+v", c.Name, e.Name, e.ValueFrom)
		default:
			vars[e.Name] = e.Value
		}
	}
	return vars
}

// flagsOf lists the ATRIUM_* variables a binary reads, from its -h output.
func flagsOf(t *testing.T, binary string, args ...string) map[string]bool {
	t.Helper()
	dir := os.Getenv("ATRIUM_BIN_DIR")
	if dir == "" {
		dir = "../../.bin/static"
	}
	path := filepath.Join(dir, binary)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s not found in %s (set ATRIUM_BIN_DIR, or run make chart-check, which builds them): %v", binary, dir, err)
	}
	var out bytes.Buffer
	cmd := exec.Command(path, append(args, "-h")...)
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run() // -h exits 0 or 2 depending on the flag package; the text is what counts
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`\((ATRIUM_[A-Z0-9_]+)\)`).FindAllStringSubmatch(out.String(), -1) {
		names[m[1]] = true
	}
	if len(names) == 0 {
		t.Fatalf("%s -h listed no ATRIUM_* variable:\n%s", binary, out.String())
	}
	return names
}

// readValues decodes a values file into v.
func readValues(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
