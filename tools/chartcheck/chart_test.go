package chartcheck

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// secretSettings are the settings that may only come from a Secret.
var secretSettings = []string{
	"ATRIUM_DATABASE_URL", "ATRIUM_ADMIN_TOKEN", "ATRIUM_INTERNAL_SECRET",
	"ATRIUM_LLM_API_KEY", "ATRIUM_SMTP_PASSWORD", "ATRIUM_INDEXNOW_KEY", "ATRIUM_DATAFORSEO_PASSWORD",
	"ATRIUM_OIDC_CLIENT_SECRET", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
}

// awsCredentials are the standard AWS variables the object store's users
// read (not flags: every AWS tool reads them so).
var awsCredentials = []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}

// filesComponents keep or serve files on the object store.
var filesComponents = []string{"gateway", "collections", "actions"}

// renderings are the value sets every structural test covers.
func renderings(t *testing.T) map[string]*manifests {
	return map[string]*manifests{
		"default values":    render(t),
		"production values": render(t, "-f", productionFile),
	}
}

// Every variable a pod is given is a flag the binary it runs reads (or an
// OTEL_* variable), so that no value of the chart is silently ignored.
func TestEveryRenderedSettingIsReadByTheBinary(t *testing.T) {
	for name, m := range renderings(t) {
		t.Run(name, func(t *testing.T) {
			for _, c := range components {
				binary := "atrium-" + c
				known := flagsOf(t, binary)
				for v := range m.env(t, m.deployment(t, c).Spec.Template.Spec.Containers[0]) {
					aws := slices.Contains(awsCredentials, v) && slices.Contains(filesComponents, c)
					if !known[v] && !strings.HasPrefix(v, "OTEL_") && !aws {
						t.Errorf("%s is given %s, which is not one of its flags' variables", binary, v)
					}
				}
			}
			known := flagsOf(t, "atrium", "migrate")
			for _, job := range m.jobs {
				for v := range m.env(t, job.Spec.Template.Spec.Containers[0]) {
					if !known[v] {
						t.Errorf("the migration Job is given %s, which atrium migrate does not read", v)
					}
				}
			}
		})
	}
}

// Secret settings come only from the Secrets named in the values, and the
// chart never renders a Secret of its own.
func TestSecretsComeOnlyFromExistingSecrets(t *testing.T) {
	m := render(t, "-f", productionFile)
	if slices.Contains(m.kinds, "Secret") {
		t.Error("the chart renders a Secret; secrets must come from existing ones")
	}
	for name, cm := range m.configMaps {
		for _, s := range append(secretSettings, "ATRIUM_NATS_URL") {
			if _, ok := cm.Data[s]; ok {
				t.Errorf("ConfigMap %s holds %s; it must come from a Secret with these values", name, s)
			}
		}
	}
	want := map[string]map[string]string{
		"gateway": {
			"ATRIUM_ADMIN_TOKEN": "secret:atrium-admin/token", "ATRIUM_INTERNAL_SECRET": "secret:atrium-internal/principal-secret",
			"ATRIUM_NATS_URL": "secret:atrium-nats/url", "ATRIUM_OIDC_CLIENT_SECRET": "secret:atrium-sso/client-secret",
		},
		"actions": {
			"ATRIUM_DATABASE_URL": "secret:atrium-postgres/database-url", "ATRIUM_INTERNAL_SECRET": "secret:atrium-internal/principal-secret",
			"ATRIUM_NATS_URL": "secret:atrium-nats/url", "ATRIUM_LLM_API_KEY": "secret:atrium-providers/openai-api-key",
			"ATRIUM_SMTP_PASSWORD": "secret:atrium-providers/smtp-password", "ATRIUM_INDEXNOW_KEY": "secret:atrium-providers/indexnow-key",
			"ATRIUM_DATAFORSEO_PASSWORD": "secret:atrium-providers/dataforseo-password",
		},
	}
	for _, c := range []string{"collections", "crm", "data", "webhooks", "audit"} {
		want[c] = map[string]string{
			"ATRIUM_DATABASE_URL": "secret:atrium-postgres/database-url", "ATRIUM_INTERNAL_SECRET": "secret:atrium-internal/principal-secret",
			"ATRIUM_NATS_URL": "secret:atrium-nats/url",
		}
	}
	// The CRM emails invitations and password resets through the actions
	// service's SMTP server.
	want["crm"]["ATRIUM_SMTP_PASSWORD"] = "secret:atrium-providers/smtp-password"
	for _, c := range filesComponents {
		want[c]["AWS_ACCESS_KEY_ID"] = "secret:atrium-s3/access-key-id"
		want[c]["AWS_SECRET_ACCESS_KEY"] = "secret:atrium-s3/secret-access-key"
	}
	for c, settings := range want {
		got := map[string]string{}
		for _, e := range m.deployment(t, c).Spec.Template.Spec.Containers[0].Env {
			if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				t.Errorf("%s: env %s is not from a Secret; only secrets belong in env, settings in the ConfigMap", c, e.Name)
				continue
			}
			got[e.Name] = "secret:" + e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		}
		if !reflect.DeepEqual(got, settings) {
			t.Errorf("%s secret env:\n got  %v\n want %v", c, got, settings)
		}
	}
	job := m.jobs["atrium-migrate"]
	if job == nil {
		t.Fatal("no migration Job")
	}
	if got := m.env(t, job.Spec.Template.Spec.Containers[0]); !reflect.DeepEqual(got, map[string]string{"ATRIUM_DATABASE_URL": "secret:atrium-postgres/database-url"}) {
		t.Errorf("migration Job env: %v", got)
	}

	// The optional provider secrets are left out when no Secret is named.
	def := render(t)
	env := def.env(t, def.deployment(t, "actions").Spec.Template.Spec.Containers[0])
	for _, s := range []string{"ATRIUM_LLM_API_KEY", "ATRIUM_SMTP_PASSWORD", "ATRIUM_INDEXNOW_KEY", "ATRIUM_DATAFORSEO_PASSWORD"} {
		if _, ok := env[s]; ok {
			t.Errorf("default values set %s; it must be absent unless a Secret is named", s)
		}
	}
	if _, ok := def.env(t, def.deployment(t, "crm").Spec.Template.Spec.Containers[0])["ATRIUM_SMTP_PASSWORD"]; ok {
		t.Error("default values give the crm ATRIUM_SMTP_PASSWORD; it must be absent unless a Secret and an SMTP server are named")
	}
	// The SEO data provider's settings: synthetic by default, with the
	// cache's TTL; DataForSEO's account and limits in production, its
	// password only from the Secret above.
	for _, c := range []struct {
		m    *manifests
		want map[string]string
	}{
		{def, map[string]string{"ATRIUM_SEO_PROVIDER": "synthetic", "ATRIUM_SEO_CACHE_TTL": "24h"}},
		{m, map[string]string{"ATRIUM_SEO_PROVIDER": "dataforseo", "ATRIUM_SEO_CACHE_TTL": "12h", "ATRIUM_DATAFORSEO_LOGIN": "seo@atrium.example.com",
			"ATRIUM_DATAFORSEO_BASE_URL": "https://api.dataforseo.com", "ATRIUM_DATAFORSEO_LOCATION": "United Kingdom", "ATRIUM_DATAFORSEO_RATE_LIMIT": "300"}},
	} {
		settings := map[string]string{}
		for _, cm := range c.m.configMaps {
			for k, v := range cm.Data {
				if strings.HasPrefix(k, "ATRIUM_SEO_") || strings.HasPrefix(k, "ATRIUM_DATAFORSEO_") {
					settings[k] = v
				}
			}
		}
		if !reflect.DeepEqual(settings, c.want) {
			t.Errorf("SEO settings:\n got  %v\n want %v", settings, c.want)
		}
	}
}

// The admin listener is reachable only through its own ClusterIP Service,
// even when the public Service is a LoadBalancer, and the Ingress only
// reaches the public port.
func TestAdminListenerIsNeverExposed(t *testing.T) {
	for _, args := range [][]string{nil, {"-f", productionFile, "--set", "gateway.service.type=LoadBalancer"}, {"--set", "gateway.service.type=NodePort"}} {
		t.Run(fmt.Sprint(args), func(t *testing.T) {
			m := render(t, args...)
			gw := m.deployment(t, "gateway").Spec.Template.Spec.Containers[0]
			ports := map[string]int32{}
			for _, p := range gw.Ports {
				ports[p.Name] = p.ContainerPort
			}
			adminPort := ports["admin"]
			if adminPort == 0 || ports["http"] == 0 || len(ports) != 2 {
				t.Fatalf("gateway container ports: %v, want http and admin", ports)
			}
			for name, svc := range m.services {
				for _, p := range svc.Spec.Ports {
					admin := p.TargetPort.StrVal == "admin" || p.TargetPort.IntVal == adminPort
					if admin && svc.Spec.Type != corev1.ServiceTypeClusterIP {
						t.Errorf("Service %s exposes the admin port as %s", name, svc.Spec.Type)
					}
				}
			}
			public := m.services["atrium-gateway"]
			if public == nil || len(public.Spec.Ports) != 1 || public.Spec.Ports[0].TargetPort != intstr.FromString("http") {
				t.Errorf("public Service must carry only the http port: %+v", public)
			}
			admin := m.services["atrium-gateway-admin"]
			if admin == nil || admin.Spec.Type != corev1.ServiceTypeClusterIP || admin.Spec.Ports[0].TargetPort != intstr.FromString("admin") {
				t.Errorf("admin Service must be ClusterIP on the admin port: %+v", admin)
			}
			for _, ing := range m.ingresses {
				for _, rule := range ing.Spec.Rules {
					for _, p := range rule.HTTP.Paths {
						b := p.Backend.Service
						if b == nil || b.Name != "atrium-gateway" || b.Port.Name != "http" {
							t.Errorf("Ingress %s routes %s to %+v; only the public port may be reached", ing.Name, p.Path, p.Backend)
						}
					}
				}
			}
		})
	}
}

// Every pod runs as a fixed non-root user on a read-only root file system,
// without privileges, capabilities or a service account token, with
// resource requests and limits.
func TestPodsAreLockedDown(t *testing.T) {
	for name, m := range renderings(t) {
		t.Run(name, func(t *testing.T) {
			pods := map[string]corev1.PodSpec{}
			for n, d := range m.deployments {
				pods[n] = d.Spec.Template.Spec
			}
			for n, j := range m.jobs {
				pods[n] = j.Spec.Template.Spec
			}
			if len(pods) != 8 {
				t.Errorf("%d pod templates, want 7 Deployments and the migration Job", len(pods))
			}
			for n, pod := range pods {
				psc := pod.SecurityContext
				if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 ||
					psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
					t.Errorf("%s: pod security context %+v", n, psc)
				}
				if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
					t.Errorf("%s mounts a service account token", n)
				}
				if sa := m.serviceAccounts[pod.ServiceAccountName]; sa == nil || sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
					t.Errorf("%s: its ServiceAccount %q is not rendered with automountServiceAccountToken: false", n, pod.ServiceAccountName)
				}
				if pod.EnableServiceLinks == nil || *pod.EnableServiceLinks {
					t.Errorf("%s: service links would add ATRIUM_<SERVICE>_PORT variables beside the settings", n)
				}
				tmp := false
				for _, v := range pod.Volumes {
					tmp = tmp || (v.Name == "tmp" && v.EmptyDir != nil)
				}
				for _, c := range pod.Containers {
					sc := c.SecurityContext
					if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
						sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
						sc.Capabilities == nil || !reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 ||
						sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != *psc.RunAsUser ||
						sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
						t.Errorf("%s/%s: container security context %+v", n, c.Name, sc)
					}
					if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() || c.Resources.Requests.Cpu().IsZero() {
						t.Errorf("%s/%s: resources %+v lack CPU and memory requests or a memory limit", n, c.Name, c.Resources)
					}
					mounted := false
					for _, vm := range c.VolumeMounts {
						mounted = mounted || (vm.Name == "tmp" && vm.MountPath == "/tmp")
					}
					if !tmp || !mounted {
						t.Errorf("%s/%s: no emptyDir at /tmp", n, c.Name)
					}
				}
			}
		})
	}
}

// The services are probed over native gRPC health for readiness; the
// gateway over /readyz and /healthz on its admin port; liveness never asks
// a check that fails because an upstream is down.
func TestProbes(t *testing.T) {
	m := render(t)
	gw := m.deployment(t, "gateway").Spec.Template.Spec.Containers[0]
	if p := gw.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" || p.HTTPGet.Port != intstr.FromString("admin") {
		t.Errorf("gateway readiness: %+v", p)
	}
	if p := gw.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port != intstr.FromString("admin") {
		t.Errorf("gateway liveness: %+v", p)
	}
	for _, s := range services {
		c := m.deployment(t, s).Spec.Template.Spec.Containers[0]
		var grpcPort int32
		for _, p := range c.Ports {
			if p.Name == "grpc" {
				grpcPort = p.ContainerPort
			}
		}
		if p := c.ReadinessProbe; p == nil || p.GRPC == nil || p.GRPC.Port != grpcPort || grpcPort == 0 {
			t.Errorf("%s readiness must be a gRPC probe of port %d: %+v", s, grpcPort, p)
		}
		if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port != intstr.FromString("metrics") {
			t.Errorf("%s liveness must be /healthz on the metrics port: %+v", s, p)
		}
		if got := m.env(t, c)["ATRIUM_METRICS_ADDR"]; got != ":9464" {
			t.Errorf("%s: ATRIUM_METRICS_ADDR %q, want the metrics port the probe asks", s, got)
		}
	}
}

// peersString renders peers for comparison and messages.
func peersString(t *testing.T, peers []networkingv1.NetworkPolicyPeer) []string {
	var out []string
	for _, p := range peers {
		b, err := yaml.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.TrimSpace(string(b)))
	}
	slices.Sort(out)
	return out
}

func componentPeer(c string) networkingv1.NetworkPolicyPeer {
	return networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
		"app.kubernetes.io/name": "atrium", "app.kubernetes.io/instance": "atrium", "app.kubernetes.io/component": c,
	}}}
}

// A service's gRPC port admits the gateway, the components that call it and
// its declared extra callers; its metrics port admits only metricsFrom; the
// gateway's admin port admits only adminFrom and metricsFrom.
func TestNetworkPoliciesAdmitOnlyDeclaredCallers(t *testing.T) {
	m := render(t, "-f", productionFile)
	var values struct {
		NetworkPolicy struct {
			MetricsFrom []networkingv1.NetworkPolicyPeer `json:"metricsFrom"`
		} `json:"networkPolicy"`
		Gateway struct {
			AdminFrom []networkingv1.NetworkPolicyPeer `json:"adminFrom"`
		} `json:"gateway"`
		CRM struct {
			ExtraCallers []networkingv1.NetworkPolicyPeer `json:"extraCallers"`
		} `json:"crm"`
		Data struct {
			ExtraCallers []networkingv1.NetworkPolicyPeer `json:"extraCallers"`
		} `json:"data"`
	}
	readValues(t, productionFile, &values)
	if len(values.NetworkPolicy.MetricsFrom) == 0 || len(values.CRM.ExtraCallers) == 0 || len(values.Gateway.AdminFrom) == 0 {
		t.Fatal("the production values must declare metricsFrom, adminFrom and extra callers for this test to mean something")
	}
	callers := map[string][]networkingv1.NetworkPolicyPeer{
		"collections": {componentPeer("gateway"), componentPeer("crm"), componentPeer("audit"), componentPeer("actions")},
		"crm": append([]networkingv1.NetworkPolicyPeer{componentPeer("gateway"), componentPeer("collections"), componentPeer("data"), componentPeer("actions"), componentPeer("webhooks")},
			values.CRM.ExtraCallers...),
		"data":     append([]networkingv1.NetworkPolicyPeer{componentPeer("gateway"), componentPeer("actions")}, values.Data.ExtraCallers...),
		"actions":  {componentPeer("gateway")},
		"webhooks": {componentPeer("gateway")},
		"audit":    {componentPeer("gateway")},
	}
	for s, want := range callers {
		np := m.policies["atrium-"+s]
		if np == nil {
			t.Errorf("no NetworkPolicy for %s", s)
			continue
		}
		wantTypes := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if s == "webhooks" { // the production values restrict its egress
			wantTypes = append(wantTypes, networkingv1.PolicyTypeEgress)
		}
		if !reflect.DeepEqual(np.Spec.PolicyTypes, wantTypes) {
			t.Errorf("%s policy types %v, want %v", s, np.Spec.PolicyTypes, wantTypes)
		}
		if !reflect.DeepEqual(np.Spec.PodSelector.MatchLabels, componentPeer(s).PodSelector.MatchLabels) {
			t.Errorf("%s policy selects %v", s, np.Spec.PodSelector.MatchLabels)
		}
		got := map[string][]string{}
		for _, rule := range np.Spec.Ingress {
			if len(rule.From) == 0 {
				t.Errorf("%s: a rule admits everyone: %+v", s, rule)
			}
			for _, p := range rule.Ports {
				got[p.Port.String()] = append(got[p.Port.String()], peersString(t, rule.From)...)
			}
		}
		wantByPort := map[string][]string{"grpc": peersString(t, want), "metrics": peersString(t, values.NetworkPolicy.MetricsFrom)}
		if !reflect.DeepEqual(got, wantByPort) {
			t.Errorf("%s admits:\n got  %v\n want %v", s, got, wantByPort)
		}
	}
	gw := m.policies["atrium-gateway"]
	if gw == nil {
		t.Fatal("no NetworkPolicy for the gateway")
	}
	for _, rule := range gw.Spec.Ingress {
		for _, p := range rule.Ports {
			switch p.Port.String() {
			case "http":
				if len(rule.From) != 0 {
					t.Errorf("the public port must admit everyone (the ingress controller): %+v", rule.From)
				}
			case "admin":
				want := peersString(t, append(append([]networkingv1.NetworkPolicyPeer{}, values.Gateway.AdminFrom...), values.NetworkPolicy.MetricsFrom...))
				if got := peersString(t, rule.From); !reflect.DeepEqual(got, want) {
					t.Errorf("admin port admits %v, want %v", got, want)
				}
			default:
				t.Errorf("gateway policy names port %s", p.Port.String())
			}
		}
	}
	// Without metricsFrom or adminFrom, nobody reaches the admin port.
	for _, rule := range render(t).policies["atrium-gateway"].Spec.Ingress {
		for _, p := range rule.Ports {
			if p.Port.String() != "http" {
				t.Errorf("default values admit %v to port %s", rule.From, p.Port.String())
			}
		}
	}
}

// The database is migrated by a pre-install/pre-upgrade hook running
// `atrium migrate`; the services never migrate themselves.
func TestMigrationRunsAsAHook(t *testing.T) {
	m := render(t)
	job := m.jobs["atrium-migrate"]
	if job == nil {
		t.Fatal("no migration Job")
	}
	a := job.Annotations
	if a["helm.sh/hook"] != "pre-install,pre-upgrade" || !strings.Contains(a["helm.sh/hook-delete-policy"], "before-hook-creation") {
		t.Errorf("Job hook annotations %v", a)
	}
	c := job.Spec.Template.Spec.Containers[0]
	if !reflect.DeepEqual(c.Command, []string{"/usr/local/bin/atrium", "migrate"}) {
		t.Errorf("Job command %v", c.Command)
	}
	if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("Job restart policy %s", job.Spec.Template.Spec.RestartPolicy)
	}
	sa := m.serviceAccounts[job.Spec.Template.Spec.ServiceAccountName]
	if sa == nil || sa.Annotations["helm.sh/hook"] != "pre-install,pre-upgrade" || sa.Annotations["helm.sh/hook-weight"] >= a["helm.sh/hook-weight"] {
		t.Errorf("the Job's ServiceAccount must be a hook created before it: %+v", sa)
	}
	for _, s := range services {
		if got := m.env(t, m.deployment(t, s).Spec.Template.Spec.Containers[0])["ATRIUM_MIGRATE"]; got != "false" {
			t.Errorf("%s: ATRIUM_MIGRATE %q, want false", s, got)
		}
	}
	if off := render(t, "--set", "migration.enabled=false"); len(off.jobs) != 0 {
		t.Error("migration.enabled=false still renders the Job")
	}
}

// Each component reaches its upstreams at the DNS names of their headless
// Services (every ready pod's address, so that calls spread over the
// replicas), on the ports those Services serve.
func TestUpstreamsAreTheServicesDNSNames(t *testing.T) {
	m := render(t, "-f", productionFile)
	addr := func(s string) string {
		svc := m.services["atrium-"+s+"-headless"]
		if svc == nil {
			t.Fatalf("no Service atrium-%s-headless", s)
		}
		if svc.Spec.ClusterIP != corev1.ClusterIPNone {
			t.Errorf("Service %s has cluster IP %q, want None (headless)", svc.Name, svc.Spec.ClusterIP)
		}
		for _, p := range svc.Spec.Ports {
			if p.Name == "grpc" {
				return fmt.Sprintf("dns:///%s.%s.svc.cluster.local:%d", svc.Name, "atrium", p.Port)
			}
		}
		t.Fatalf("Service %s has no grpc port", svc.Name)
		return ""
	}
	want := map[string]map[string]string{
		"gateway": {"ATRIUM_COLLECTIONS_ADDR": addr("collections"), "ATRIUM_CRM_ADDR": addr("crm"), "ATRIUM_DATA_ADDR": addr("data"), "ATRIUM_ACTIONS_ADDR": addr("actions"),
			"ATRIUM_WEBHOOKS_ADDR": addr("webhooks"), "ATRIUM_AUDIT_ADDR": addr("audit")},
		"collections": {"ATRIUM_CRM_ADDR": addr("crm")},
		"crm":         {"ATRIUM_COLLECTIONS_ADDR": addr("collections")},
		"data":        {"ATRIUM_CRM_ADDR": addr("crm")},
		"actions":     {"ATRIUM_CRM_ADDR": addr("crm"), "ATRIUM_DATA_ADDR": addr("data"), "ATRIUM_COLLECTIONS_ADDR": addr("collections")},
		"webhooks":    {"ATRIUM_CRM_ADDR": addr("crm")},
		"audit":       {"ATRIUM_COLLECTIONS_ADDR": addr("collections")},
	}
	for c, addrs := range want {
		env := m.env(t, m.deployment(t, c).Spec.Template.Spec.Containers[0])
		for k, v := range addrs {
			if env[k] != v {
				t.Errorf("%s: %s=%q, want %q", c, k, env[k], v)
			}
		}
	}
	for _, s := range services {
		env := m.env(t, m.deployment(t, s).Spec.Template.Spec.Containers[0])
		if !strings.HasSuffix(addr(s), env["ATRIUM_GRPC_ADDR"]) {
			t.Errorf("%s listens on %q, its Service sends to %s", s, env["ATRIUM_GRPC_ADDR"], addr(s))
		}
	}
}

// With autoscaling on, each component has a CPU HorizontalPodAutoscaler
// and its Deployment leaves the replica count to it; each has a
// PodDisruptionBudget selecting its pods.
func TestScalingResources(t *testing.T) {
	m := render(t, "-f", productionFile)
	for _, c := range components {
		d := m.deployment(t, c)
		if d.Spec.Replicas != nil {
			t.Errorf("%s: replicas %d set while its autoscaler owns the count", c, *d.Spec.Replicas)
		}
		hpa := m.hpas["atrium-"+c]
		if hpa == nil || hpa.Spec.ScaleTargetRef.Name != d.Name || hpa.Spec.ScaleTargetRef.Kind != "Deployment" ||
			len(hpa.Spec.Metrics) != 1 || hpa.Spec.Metrics[0].Resource == nil || hpa.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU {
			t.Errorf("%s: autoscaler %+v", c, hpa)
		}
		pdb := m.pdbs["atrium-"+c]
		if pdb == nil || !reflect.DeepEqual(pdb.Spec.Selector.MatchLabels, d.Spec.Selector.MatchLabels) {
			t.Errorf("%s: disruption budget %+v does not select the Deployment's pods", c, pdb)
		}
	}
	def := render(t)
	if len(def.hpas) != 0 {
		t.Errorf("default values render %d autoscalers", len(def.hpas))
	}
	if r := def.deployment(t, "crm").Spec.Replicas; r == nil || *r != 1 {
		t.Errorf("default crm replicas %v", r)
	}
}

// The actions service keeps generated files in its data directory: an
// emptyDir by default, the claim when persistence is on.
func TestFilesStore(t *testing.T) {
	// data is the volume a component's ATRIUM_DATA_DIR is on; nil when it
	// has none.
	data := func(m *manifests, c string) *corev1.VolumeSource {
		d := m.deployment(t, c)
		ct := d.Spec.Template.Spec.Containers[0]
		dir, ok := m.env(t, ct)["ATRIUM_DATA_DIR"]
		if !ok {
			return nil
		}
		for _, vm := range ct.VolumeMounts {
			if vm.MountPath == dir {
				for _, v := range d.Spec.Template.Spec.Volumes {
					if v.Name == vm.Name {
						return &v.VolumeSource
					}
				}
			}
		}
		t.Fatalf("%s: ATRIUM_DATA_DIR %q is not a mounted volume", c, dir)
		return nil
	}
	// Default: no bucket, no claim: the services write to emptyDirs, and
	// the gateway, which could read neither, is given no directory.
	def := render(t)
	for _, c := range []string{"collections", "actions"} {
		if v := data(def, c); v == nil || v.EmptyDir == nil {
			t.Errorf("default %s data directory: %+v, want an emptyDir", c, v)
		}
	}
	if v := data(def, "gateway"); v != nil {
		t.Errorf("default gateway data directory: %+v, want none", v)
	}
	// A claim: one ReadWriteMany volume under all three.
	shared := render(t, "--set", "objectStore.persistence.enabled=true")
	claim := shared.claims["atrium-data"]
	if claim == nil || !slices.Contains(claim.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Fatalf("claim %+v; want atrium-data, ReadWriteMany", claim)
	}
	for _, c := range filesComponents {
		if v := data(shared, c); v == nil || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != claim.Name {
			t.Errorf("%s with persistence: data volume %+v, want the claim %s", c, v, claim.Name)
		}
	}
	existing := render(t, "--set", "objectStore.persistence.enabled=true", "--set", "objectStore.persistence.existingClaim=media")
	if v := data(existing, "collections"); v == nil || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "media" || len(existing.claims) != 0 {
		t.Errorf("existing claim: volume %+v, %d claims rendered", v, len(existing.claims))
	}
	// A bucket: the three are given it and no volume; the others nothing.
	prod := render(t, "-f", productionFile)
	for _, c := range components {
		env := prod.env(t, prod.deployment(t, c).Spec.Template.Spec.Containers[0])
		uses := slices.Contains(filesComponents, c)
		if got := env["ATRIUM_S3_BUCKET"]; (got == "atrium-media") != uses {
			t.Errorf("%s: ATRIUM_S3_BUCKET %q", c, got)
		}
		if uses && (env["ATRIUM_S3_ENDPOINT"] != "https://s3.eu-west-1.amazonaws.com" || env["ATRIUM_S3_REGION"] != "eu-west-1" || env["ATRIUM_S3_PREFIX"] != "production/") {
			t.Errorf("%s: S3 settings %v", c, env)
		}
		if v := data(prod, c); v != nil {
			t.Errorf("%s with a bucket mounts a data directory: %+v", c, v)
		}
	}
	if len(prod.claims) != 0 {
		t.Errorf("a bucket and a claim: %v", prod.claims)
	}
	if got := prod.env(t, prod.deployment(t, "collections").Spec.Template.Spec.Containers[0]); got["ATRIUM_MAX_ASSET_BYTES"] != "26214400" || got["ATRIUM_ALLOW_SVG_ASSETS"] != "true" {
		t.Errorf("collections' asset settings: %v", got)
	}
	// With a bucket, more actions replicas need no volume.
	if _, stderr, err := helmTemplate(t, "--set", "objectStore.s3.bucket=media", "--set", "actions.replicaCount=3"); err != nil {
		t.Errorf("three actions replicas on a bucket refused: %s", stderr)
	}
}

// A change of a component's settings changes its pods' config checksum, so
// the pods roll; other components' pods stay.
func TestSettingChangesRollOnlyTheirPods(t *testing.T) {
	checksums := func(m *manifests) map[string]string {
		out := map[string]string{}
		for _, c := range components {
			out[c] = m.deployment(t, c).Spec.Template.Annotations["checksum/config"]
			if out[c] == "" {
				t.Fatalf("%s has no checksum/config annotation", c)
			}
		}
		return out
	}
	before := checksums(render(t))
	after := checksums(render(t, "--set", "actions.providerTimeout=45s"))
	for _, c := range components {
		if changed := before[c] != after[c]; changed != (c == "actions") {
			t.Errorf("%s checksum changed: %v", c, changed)
		}
	}
	everyone := checksums(render(t, "--set", "logging.level=debug"))
	for _, c := range components {
		if everyone[c] == before[c] {
			t.Errorf("%s checksum unchanged after logging.level changed", c)
		}
	}
}

// Values that cannot work are refused at install time with a message that
// names them.
func TestRefusedValues(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--set", "gateway.adminServiceType=LoadBalancer"}, "additional properties 'adminServiceType' not allowed"},
		{[]string{"--set", "secrets.internalSecret.name="}, "/secrets/internalSecret/name"},
		{[]string{"--set", "secrets.databaseURL=null"}, "missing property 'databaseURL'"},
		{[]string{"--set", "securityContext.runAsUser=0"}, "/securityContext/runAsUser"},
		{[]string{"--set", "gateway.service.type=ExternalName"}, "/gateway/service/type"},
		{[]string{"--set", "crm.drainDelay=5"}, "/crm/drainDelay"},
		{[]string{"--set", "logging.format=xml"}, "/logging/format"},
		{[]string{"--set", "otel.env.SECRET=x"}, "'SECRET' does not match pattern"},
		{[]string{"--set", "actions.smtp.tls=ssl"}, "/actions/smtp/tls"},
		{[]string{"--set-json", `data.extraCallers=[{"ipBlock":{"cidr":"0.0.0.0/0"}}]`}, "additional properties 'ipBlock' not allowed"},
		{[]string{"--set", "actions.replicaCount=2"}, "actions may run more than one replica only with objectStore.s3.bucket, or objectStore.persistence on a ReadWriteMany volume"},
		{[]string{"--set", "objectStore.persistence.enabled=true", "--set-json", `objectStore.persistence.accessModes=["ReadWriteOnce"]`}, "objectStore.persistence needs accessModes [ReadWriteMany]"},
		{[]string{"--set", "objectStore.s3.bucket=Bad_Bucket"}, "/objectStore/s3/bucket"},
		{[]string{"--set", "objectStore.s3.prefix=atrium"}, "/objectStore/s3/prefix"},
		{[]string{"--set", "collections.maxAssetBytes=0"}, "/collections/maxAssetBytes"},
		{[]string{"--set", "actions.llm.baseURL=https://api.openai.com/v1"}, "actions.llm.model is required with actions.llm.baseURL"},
		{[]string{"--set", "actions.smtp.addr=smtp.example.com:587"}, "actions.smtp.from is required with actions.smtp.addr"},
		{[]string{"--set", "actions.seo.provider=semrush"}, "/actions/seo/provider"},
		{[]string{"--set", "actions.seo.provider=dataforseo", "--set", "actions.seo.dataForSEO.login=a@b.example"}, "actions.seo.provider dataforseo needs actions.seo.dataForSEO.login and secrets.dataForSEOPassword"},
		{[]string{"--set", "actions.seo.provider=dataforseo", "--set", "secrets.dataForSEOPassword.name=dfs"}, "needs actions.seo.dataForSEO.login"},
		{[]string{"--set", "actions.seo.dataForSEO.baseURL=https://user:pw@api.dataforseo.com"}, "/actions/seo/dataForSEO/baseURL"},
		{[]string{"--set", "actions.seo.dataForSEO.rateLimit=0"}, "/actions/seo/dataForSEO/rateLimit"},
		{[]string{"--set", "crm.autoscaling.enabled=true", "--set", "crm.resources.requests=null"}, "crm.autoscaling.enabled needs crm.resources.requests.cpu"},
		{[]string{"--set", "gateway.autoscaling.enabled=true", "--set", "gateway.autoscaling.minReplicas=5", "--set", "gateway.autoscaling.maxReplicas=3"}, "gateway.autoscaling.minReplicas (5) is above maxReplicas (3)"},
		{[]string{"--set", "ingress.enabled=true", "--set-json", "ingress.hosts=[]"}, "ingress.enabled needs at least one entry in ingress.hosts"},
		{[]string{"--set", "webhooks.retrySchedule=5s;5m"}, "/webhooks/retrySchedule"},
		{[]string{"--set", "webhooks.workers=0"}, "/webhooks/workers"},
		{[]string{"--set", "gateway.oidc.issuer=https://id.example.com/"}, "gateway.oidc.clientID is required with gateway.oidc.issuer"},
		{[]string{"--set", "gateway.oidc.issuer=https://id.example.com/", "--set", "gateway.oidc.clientID=atrium"}, "gateway.oidc.redirectURL is required"},
		{[]string{"--set", "gateway.oidc.issuer=id.example.com"}, "/gateway/oidc/issuer"},
	} {
		_, stderr, err := helmTemplate(t, tc.args...)
		if err == nil {
			t.Errorf("%v rendered; want it refused with %q", tc.args, tc.want)
			continue
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("%v refused with:\n%s\nwant it to say %q", tc.args, stderr, tc.want)
		}
	}
}

// The media links the actions service writes, the assets' URLs the
// collections service answers and the CRM's invitation and reset links
// start with the public URL clients use: given, or taken from the Ingress.
func TestPublicURL(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"-f", productionFile}, "https://api.atrium.example.com"},
		{[]string{"--set", "ingress.enabled=true"}, "http://atrium.example.com"},
		{[]string{"--set", "ingress.enabled=true", "--set", "actions.publicURL=https://cdn.example.org"}, "https://cdn.example.org"},
	} {
		m := render(t, tc.args...)
		for _, c := range []string{"actions", "collections", "crm"} {
			if got := m.env(t, m.deployment(t, c).Spec.Template.Spec.Containers[0])["ATRIUM_PUBLIC_URL"]; got != tc.want {
				t.Errorf("%v: %s's ATRIUM_PUBLIC_URL %q, want %q", tc.args, c, got, tc.want)
			}
		}
	}
}

// Single sign-on's settings reach the gateway only when an issuer is set;
// the callback to register defaults to the public URL's.
func TestSingleSignOn(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want map[string]string
	}{
		{nil, map[string]string{}},
		{[]string{"-f", productionFile}, map[string]string{"ATRIUM_OIDC_ISSUER": "https://id.example.com/", "ATRIUM_OIDC_CLIENT_ID": "atrium",
			"ATRIUM_OIDC_REDIRECT_URL": "https://api.atrium.example.com/api/v1/sessions/oidc/callback", "ATRIUM_OIDC_CLIENT_SECRET": "secret:atrium-sso/client-secret"}},
		{[]string{"--set", "gateway.oidc.issuer=https://id.example.com/", "--set", "gateway.oidc.clientID=atrium",
			"--set", "gateway.oidc.redirectURL=https://atrium.example.org/api/v1/sessions/oidc/callback"},
			map[string]string{"ATRIUM_OIDC_ISSUER": "https://id.example.com/", "ATRIUM_OIDC_CLIENT_ID": "atrium",
				"ATRIUM_OIDC_REDIRECT_URL": "https://atrium.example.org/api/v1/sessions/oidc/callback"}},
	} {
		m := render(t, tc.args...)
		got := map[string]string{}
		for k, v := range m.env(t, m.deployment(t, "gateway").Spec.Template.Spec.Containers[0]) {
			if strings.HasPrefix(k, "ATRIUM_OIDC_") {
				got[k] = v
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v: the gateway's single sign-on settings\n got  %v\n want %v", tc.args, got, tc.want)
		}
	}
}

// The webhooks service connects to URLs tenants register. Its egress is
// unrestricted by default; with networkPolicy.webhooksEgress.enabled it is
// DNS, the crm pods, every public address (no private, loopback,
// link-local or CGNAT range) and the backends the values name.
func TestWebhooksEgress(t *testing.T) {
	if np := render(t).policies["atrium-webhooks"]; np == nil || len(np.Spec.Egress) != 0 ||
		slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
		t.Fatalf("default values restrict the webhooks service's egress: %+v", np)
	}
	var values struct {
		NetworkPolicy struct {
			WebhooksEgress struct {
				Enabled  bool                             `json:"enabled"`
				Backends []networkingv1.NetworkPolicyPeer `json:"backends"`
			} `json:"webhooksEgress"`
		} `json:"networkPolicy"`
	}
	readValues(t, productionFile, &values)
	if !values.NetworkPolicy.WebhooksEgress.Enabled || len(values.NetworkPolicy.WebhooksEgress.Backends) == 0 {
		t.Fatal("the production values must restrict the webhooks egress with backends for this test to mean something")
	}
	np := render(t, "-f", productionFile).policies["atrium-webhooks"]
	var dns, crm, public, backends bool
	for _, rule := range np.Spec.Egress {
		switch {
		case len(rule.To) == 0:
			for _, p := range rule.Ports {
				dns = dns || p.Port.IntValue() == 53
			}
			if !dns {
				t.Errorf("an egress rule to everyone that is not DNS: %+v", rule)
			}
		case rule.To[0].IPBlock != nil && rule.To[0].IPBlock.CIDR == "0.0.0.0/0":
			for _, peer := range rule.To {
				if b := peer.IPBlock; b != nil && b.CIDR == "0.0.0.0/0" {
					public = true
					for _, private := range []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "127.0.0.0/8", "169.254.0.0/16", "100.64.0.0/10"} {
						if !slices.Contains(b.Except, private) {
							t.Errorf("the public egress does not exclude %s", private)
						}
					}
				}
			}
		case reflect.DeepEqual(rule.To, []networkingv1.NetworkPolicyPeer{componentPeer("crm")}):
			crm = len(rule.Ports) == 1 && rule.Ports[0].Port.String() == "grpc"
		default:
			backends = reflect.DeepEqual(peersString(t, rule.To), peersString(t, values.NetworkPolicy.WebhooksEgress.Backends))
		}
	}
	if !dns || !crm || !public || !backends {
		t.Errorf("webhooks egress: DNS %v, crm %v, public internet %v, backends %v; want all", dns, crm, public, backends)
	}
}

// nats.streamReplicas reaches every service (the gateway has no stream):
// 1 by default, 3 in the production values (a three-node NATS cluster).
func TestNATSStreamReplicas(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{{nil, "1"}, {[]string{"-f", productionFile}, "3"}} {
		m := render(t, tc.args...)
		for _, c := range []string{"collections", "crm", "data", "actions", "webhooks", "audit"} {
			if got := m.env(t, m.deployment(t, c).Spec.Template.Spec.Containers[0])["ATRIUM_NATS_STREAM_REPLICAS"]; got != tc.want {
				t.Errorf("%v: %s has ATRIUM_NATS_STREAM_REPLICAS %q, want %q", tc.args, c, got, tc.want)
			}
		}
		if got, ok := m.env(t, m.deployment(t, "gateway").Spec.Template.Spec.Containers[0])["ATRIUM_NATS_STREAM_REPLICAS"]; ok {
			t.Errorf("the gateway has ATRIUM_NATS_STREAM_REPLICAS %q: it has no stream", got)
		}
	}
}
