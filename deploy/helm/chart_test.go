// Package helm tests the Helm chart in helm/weft: rendered with Helm's own
// library over several value sets, every manifest strictly decoded into
// Kubernetes' API types (the CRDs as unstructured objects with their
// required fields), the references between manifests checked (selectors,
// ports, Secret keys, hooks), and the server pod's command line run for real
// on PostgreSQL, probes and metrics included.
package helm

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

const database = "database:\n  url: postgres://weft:pw@db:5432/weft\n"

// The chart's own checks, those `helm lint` makes that matter here: the
// metadata, the Kubernetes versions it accepts, the schema refusing an
// unknown value, every value of values.yaml read by some template.
func TestChartLint(t *testing.T) {
	t.Parallel()
	ch := loadChart(t)
	md := ch.Metadata
	if err := md.Validate(); err != nil {
		t.Fatal(err)
	}
	if md.APIVersion != chart.APIVersionV2 || md.Name != filepath.Base(chartDir) || md.AppVersion == "" || md.Type != "application" {
		t.Errorf("Chart.yaml: apiVersion %s, name %s, appVersion %q, type %q", md.APIVersion, md.Name, md.AppVersion, md.Type)
	}
	if !chartutil.IsCompatibleRange(md.KubeVersion, "1.30.0") || chartutil.IsCompatibleRange(md.KubeVersion, "1.29.9") {
		t.Errorf("kubeVersion %q: want 1.30 (preStop sleep) and later", md.KubeVersion)
	}
	if ch.Schema == nil {
		t.Fatal("no values.schema.json")
	}
	var templates strings.Builder
	for _, f := range ch.Templates {
		templates.Write(f.Data)
	}
	// A leaf is read when a template names it; a table, when a template hands it whole to toYaml, with or a
	// helper (resources, env).
	var walk func(path string, v any)
	walk = func(path string, v any) {
		leaf := path[strings.LastIndex(path, ".")+1:]
		m, ok := v.(map[string]any)
		if !ok || len(m) == 0 {
			if !strings.Contains(templates.String(), "."+leaf) {
				t.Errorf("values.yaml: %s is read by no template", path)
			}
			return
		}
		if regexp.MustCompile(`(with|toYaml|include "[^"]+") \$?[\w.]*\.` + leaf + `\b[^.]`).MatchString(templates.String()) {
			return
		}
		for k, sub := range m {
			walk(strings.TrimPrefix(path+"."+k, "."), sub)
		}
	}
	walk("", ch.Values)
}

// Rendered with only a database, the release is the server (Deployment,
// Service, PDB for its 2 replicas), its Secret, and the migration Job with
// its hook Secret; nothing optional.
func TestChartDefaults(t *testing.T) {
	t.Parallel()
	r := mustRender(t, database)
	wantObjects(t, r, "Deployment/prod-weft", "Service/prod-weft", "Secret/prod-weft", "PodDisruptionBudget/prod-weft",
		"Secret/prod-weft-migrate", "Job/prod-weft-migrate")

	d := get[*appsv1.Deployment](t, r, "Deployment", fullname)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas %v, want 2", d.Spec.Replicas)
	}
	pod := d.Spec.Template.Spec
	c := container(t, &pod)
	if c.Image != "ghcr.io/weftdev/weft:0.1.0" || len(c.Args) != 0 || len(c.Command) != 0 {
		t.Errorf("server image %q command %v args %v: want the appVersion tag and the image's entrypoint", c.Image, c.Command, c.Args)
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if ports["http"] != 8123 || ports["metrics"] != 9464 {
		t.Errorf("ports %v", ports)
	}
	for _, p := range []struct {
		probe *corev1.Probe
		path  string
	}{{c.StartupProbe, "/livez"}, {c.ReadinessProbe, "/ok"}, {c.LivenessProbe, "/livez"}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port.String() != "http" {
			t.Errorf("probe %+v, want GET %s on http", p.probe, p.path)
		}
	}
	if c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Error("server root filesystem is writable")
	}
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil || c.Lifecycle.PreStop.Sleep.Seconds != 10 {
		t.Errorf("preStop %+v, want a 10 s sleep", c.Lifecycle)
	}
	if g := pod.TerminationGracePeriodSeconds; g == nil || *g <= 10+30 {
		t.Errorf("terminationGracePeriodSeconds %v, want above the preStop sleep (10) + WEFT_SHUTDOWN_TIMEOUT (30)", g)
	}
	wantValue(t, c, "WEFT_ADDR", "0.0.0.0:8123")
	wantValue(t, c, "WEFT_AUTH", "keys")
	wantValue(t, c, "WEFT_MIGRATE", "false")
	wantValue(t, c, "WEFT_SHUTDOWN_TIMEOUT", "30s")
	wantValue(t, c, "WEFT_BUILTIN_GRAPHS", "false")
	wantValue(t, c, "WEFT_METRICS_ADDR", "0.0.0.0:9464")
	wantSecretRef(t, c, "DATABASE_URL", fullname, "DATABASE_URL")
	for _, v := range []string{"LANGGRAPH_AES_KEY", "WEFT_AES_OLD_KEYS", "WEFT_JWT_JWKS_URL"} {
		if _, ok := env(c)[v]; ok {
			t.Errorf("%s set without its values", v)
		}
	}
	if len(pod.TopologySpreadConstraints) != 1 || pod.TopologySpreadConstraints[0].TopologyKey != "kubernetes.io/hostname" {
		t.Errorf("topology spread %+v, want one over nodes", pod.TopologySpreadConstraints)
	}
	checkSelector(t, "spread", pod.TopologySpreadConstraints[0].LabelSelector, d.Spec.Template.Labels)
	if s := get[*corev1.Secret](t, r, "Secret", fullname); s.StringData["DATABASE_URL"] != "postgres://weft:pw@db:5432/weft" {
		t.Errorf("Secret %v", s.StringData)
	}
	if d.Spec.Template.Annotations["checksum/secret"] == "" {
		t.Error("no checksum of the Secret on the pods: a changed Secret would not roll them")
	}

	svc := get[*corev1.Service](t, r, "Service", fullname)
	if len(svc.Spec.Ports) != 2 || svc.Spec.Ports[0].Port != 8123 || svc.Spec.Ports[0].TargetPort.String() != "http" ||
		svc.Spec.Ports[1].Name != "metrics" {
		t.Errorf("service ports %+v", svc.Spec.Ports)
	}

	// The Job: a pre-install and pre-upgrade hook running weft migrate, its DATABASE_URL from a hook Secret made
	// before it (pre-install hooks run before the release's Secret exists).
	job := get[*batchv1.Job](t, r, "Job", fullname+"-migrate")
	hook := get[*corev1.Secret](t, r, "Secret", fullname+"-migrate")
	if a := job.Annotations; a["helm.sh/hook"] != "pre-install,pre-upgrade" || a["helm.sh/hook-delete-policy"] == "" {
		t.Errorf("job annotations %v", a)
	}
	hookWeight, err1 := strconv.Atoi(hook.Annotations["helm.sh/hook-weight"])
	jobWeight, err2 := strconv.Atoi(job.Annotations["helm.sh/hook-weight"])
	if hook.Annotations["helm.sh/hook"] != job.Annotations["helm.sh/hook"] || err1 != nil || err2 != nil || hookWeight >= jobWeight {
		t.Errorf("hook secret annotations %v: want a hook of the Job's events created before it (Job's: %v)", hook.Annotations, job.Annotations)
	}
	jc := container(t, &job.Spec.Template.Spec)
	if !slices.Equal(jc.Args, []string{"migrate"}) || jc.Image != c.Image || job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("job container %s %v, restart %s", jc.Image, jc.Args, job.Spec.Template.Spec.RestartPolicy)
	}
	wantSecretRef(t, jc, "DATABASE_URL", fullname+"-migrate", "DATABASE_URL")
	if hook.StringData["DATABASE_URL"] != "postgres://weft:pw@db:5432/weft" {
		t.Errorf("hook secret %v", hook.StringData)
	}

	pdb := get[*policyv1.PodDisruptionBudget](t, r, "PodDisruptionBudget", fullname)
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("pdb %+v", pdb.Spec)
	}
	checkSelector(t, "pdb", pdb.Spec.Selector, d.Spec.Template.Labels)
	for _, want := range []string{"weft keys create --scope worker", "port-forward svc/prod-weft 8123", "No worker is enabled"} {
		if !strings.Contains(r.notes, want) {
			t.Errorf("NOTES.txt lacks %q:\n%s", want, r.notes)
		}
	}
}

// Workers of both languages: Python with a CPU HPA, JS scaled by KEDA on
// the queue depth of its graphs; both reach the server through the Service
// with the workers' key from the chart's Secret.
func TestChartWorkers(t *testing.T) {
	t.Parallel()
	r := mustRender(t, database+`
workerKey: {value: weft_workerkey}
workers:
  python:
    enabled: true
    image: {repository: registry.example.com/agents-py, tag: "1.2.3"}
    autoscaling: {enabled: true, minReplicas: 2, maxReplicas: 6}
  js:
    enabled: true
    image: {repository: registry.example.com/agents-js, digest: "sha256:`+strings.Repeat("ab", 32)+`"}
    args: ["--graphs", "agent,other"]
    concurrency: 4
    graphs: [agent, other]
    keda: {enabled: true, minReplicas: 0, maxReplicas: 20}
`)
	wantObjects(t, r, "Deployment/prod-weft", "Service/prod-weft", "Secret/prod-weft", "PodDisruptionBudget/prod-weft",
		"Secret/prod-weft-migrate", "Job/prod-weft-migrate",
		"Deployment/prod-weft-worker-python", "HorizontalPodAutoscaler/prod-weft-worker-python",
		"Deployment/prod-weft-worker-js", "ScaledObject/prod-weft-worker-js")
	svc := get[*corev1.Service](t, r, "Service", fullname)
	secret := get[*corev1.Secret](t, r, "Secret", fullname)
	if secret.StringData["WEFT_API_KEY"] != "weft_workerkey" {
		t.Errorf("secret %v", keys(secret.StringData))
	}
	for lang, image := range map[string]string{"python": "registry.example.com/agents-py:1.2.3",
		"js": "registry.example.com/agents-js@sha256:" + strings.Repeat("ab", 32)} {
		d := get[*appsv1.Deployment](t, r, "Deployment", fullname+"-worker-"+lang)
		if d.Spec.Replicas != nil {
			t.Errorf("%s: replicas %d set under an autoscaler", lang, *d.Spec.Replicas)
		}
		c := container(t, &d.Spec.Template.Spec)
		if c.Image != image {
			t.Errorf("%s image %q, want %q", lang, c.Image, image)
		}
		// WEFT_URL is the Service, on its http port.
		wantValue(t, c, "WEFT_URL", fmt.Sprintf("http://%s:%d", svc.Name, svc.Spec.Ports[0].Port))
		wantSecretRef(t, c, "WEFT_API_KEY", fullname, "WEFT_API_KEY")
		if _, ok := env(c)["DATABASE_URL"]; ok {
			t.Errorf("%s worker gets DATABASE_URL: workers talk to the server only", lang)
		}
		if d.Spec.Template.Labels["app.kubernetes.io/component"] != "worker-"+lang ||
			labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("%s worker pods %v: the server's Service must not select them", lang, d.Spec.Template.Labels)
		}
	}
	js := container(t, &get[*appsv1.Deployment](t, r, "Deployment", fullname+"-worker-js").Spec.Template.Spec)
	wantValue(t, js, "WEFT_WORKER_CONCURRENCY", "4")
	if !slices.Equal(js.Args, []string{"--graphs", "agent,other"}) {
		t.Errorf("js args %v", js.Args)
	}
	hpa := get[*autoscalingv2.HorizontalPodAutoscaler](t, r, "HorizontalPodAutoscaler", fullname+"-worker-python")
	if hpa.Spec.MaxReplicas != 6 || len(hpa.Spec.Metrics) != 1 || hpa.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU {
		t.Errorf("python HPA %+v", hpa.Spec)
	}

	so := r.crd(t, "ScaledObject", fullname+"-worker-js")
	target, _, _ := unstructured.NestedString(so.Object, "spec", "scaleTargetRef", "name")
	min, _, _ := unstructured.NestedInt64(so.Object, "spec", "minReplicaCount")
	triggers, _, _ := unstructured.NestedSlice(so.Object, "spec", "triggers")
	if target != fullname+"-worker-js" || min != 0 || len(triggers) != 1 {
		t.Fatalf("ScaledObject spec %v", so.Object["spec"])
	}
	md := triggers[0].(map[string]any)["metadata"].(map[string]any)
	if triggers[0].(map[string]any)["type"] != "prometheus" || md["threshold"] != "4" ||
		md["serverAddress"] != "http://prometheus-operated.monitoring.svc:9090" {
		t.Errorf("trigger %v", triggers[0])
	}
	want := `sum(max by (graph_id, state) (weft_queue_dispatches{namespace="agents",service="prod-weft",state=~"queued|claimed",graph_id=~"agent|other"}))`
	if md["query"] != want {
		t.Errorf("query\n%s\nwant\n%s", md["query"], want)
	}
	if !strings.Contains(r.notes, "Workers (js, python)") {
		t.Errorf("NOTES.txt:\n%s", r.notes)
	}
}

// Secrets of the operator's own (existingSecret) replace the chart's: it
// renders none, and every variable reads the named Secret's key.
func TestChartExistingSecrets(t *testing.T) {
	t.Parallel()
	r := mustRender(t, `
database: {existingSecret: existing-pg, existingSecretKey: uri}
server: {env: {WEFT_MOUNT_PREFIX: /api}}
encryption: {existingSecret: existing-aes}
workerKey: {existingSecret: existing-worker, existingSecretKey: key}
workers:
  python: {enabled: true, image: {repository: agents-py, tag: v1}, envFrom: [{secretRef: {name: existing-project}}]}
`)
	wantObjects(t, r, "Deployment/prod-weft", "Service/prod-weft", "PodDisruptionBudget/prod-weft",
		"Job/prod-weft-migrate", "Deployment/prod-weft-worker-python")
	server := container(t, &get[*appsv1.Deployment](t, r, "Deployment", fullname).Spec.Template.Spec)
	wantSecretRef(t, server, "DATABASE_URL", "existing-pg", "uri")
	wantSecretRef(t, server, "LANGGRAPH_AES_KEY", "existing-aes", "LANGGRAPH_AES_KEY")
	wantSecretRef(t, server, "WEFT_AES_OLD_KEYS", "existing-aes", "WEFT_AES_OLD_KEYS")
	if ref := env(server)["WEFT_AES_OLD_KEYS"].ValueFrom.SecretKeyRef; ref.Optional == nil || !*ref.Optional {
		t.Error("WEFT_AES_OLD_KEYS is not optional: a Secret without old keys would keep the server from starting")
	}
	job := container(t, &get[*batchv1.Job](t, r, "Job", fullname+"-migrate").Spec.Template.Spec)
	wantSecretRef(t, job, "DATABASE_URL", "existing-pg", "uri")
	worker := container(t, &get[*appsv1.Deployment](t, r, "Deployment", fullname+"-worker-python").Spec.Template.Spec)
	wantSecretRef(t, worker, "WEFT_API_KEY", "existing-worker", "key")
	wantValue(t, worker, "WEFT_URL", "http://prod-weft:8123/api") // the worker API is under the mount prefix too
	if len(worker.EnvFrom) != 1 || worker.EnvFrom[0].SecretRef.Name != "existing-project" {
		t.Errorf("worker envFrom %+v", worker.EnvFrom)
	}
	if !strings.Contains(r.notes, "Secret existing-worker (key)") {
		t.Errorf("NOTES.txt:\n%s", r.notes)
	}

	// Keys the chart keeps: encryption from values.
	r = mustRender(t, database+"encryption: {aesKey: k1, oldKeys: k0}\n")
	server = container(t, &get[*appsv1.Deployment](t, r, "Deployment", fullname).Spec.Template.Spec)
	wantSecretRef(t, server, "LANGGRAPH_AES_KEY", fullname, "LANGGRAPH_AES_KEY")
	wantSecretRef(t, server, "WEFT_AES_OLD_KEYS", fullname, "WEFT_AES_OLD_KEYS")
	if s := get[*corev1.Secret](t, r, "Secret", fullname); s.StringData["LANGGRAPH_AES_KEY"] != "k1" || s.StringData["WEFT_AES_OLD_KEYS"] != "k0" {
		t.Errorf("secret %v", s.StringData)
	}
}

// Ingress and ServiceMonitor on: both reach the Service by the names of its
// ports.
func TestChartIngressAndServiceMonitor(t *testing.T) {
	t.Parallel()
	r := mustRender(t, database+`
ingress:
  enabled: true
  className: nginx
  annotations: {nginx.ingress.kubernetes.io/proxy-buffering: "off"}
  hosts: [{host: weft.example.com, paths: [{path: /, pathType: Prefix}]}]
  tls: [{secretName: weft-tls, hosts: [weft.example.com]}]
metrics:
  serviceMonitor: {enabled: true, labels: {release: kube-prometheus-stack}}
`)
	wantObjects(t, r, "Deployment/prod-weft", "Service/prod-weft", "Secret/prod-weft", "PodDisruptionBudget/prod-weft",
		"Secret/prod-weft-migrate", "Job/prod-weft-migrate", "Ingress/prod-weft", "ServiceMonitor/prod-weft")
	svc := get[*corev1.Service](t, r, "Service", fullname)
	svcPorts := map[string]bool{}
	for _, p := range svc.Spec.Ports {
		svcPorts[p.Name] = true
	}
	ing := get[*networkingv1.Ingress](t, r, "Ingress", fullname)
	if ing.Spec.IngressClassName == nil || *ing.Spec.IngressClassName != "nginx" || len(ing.Spec.TLS) != 1 || len(ing.Spec.Rules) != 1 {
		t.Fatalf("ingress %+v", ing.Spec)
	}
	b := ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service
	if ing.Spec.Rules[0].Host != "weft.example.com" || b.Name != svc.Name || b.Port.Name != "http" || !svcPorts[b.Port.Name] {
		t.Errorf("ingress rule %+v", ing.Spec.Rules[0])
	}
	sm := r.crd(t, "ServiceMonitor", fullname)
	if sm.GetLabels()["release"] != "kube-prometheus-stack" {
		t.Errorf("ServiceMonitor labels %v", sm.GetLabels())
	}
	sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	if !labels.SelectorFromSet(sel).Matches(labels.Set(svc.Labels)) {
		t.Errorf("ServiceMonitor selects %v, the Service is labelled %v", sel, svc.Labels)
	}
	eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if ep := eps[0].(map[string]any); ep["port"] != "metrics" || ep["path"] != "/metrics" || !svcPorts["metrics"] {
		t.Errorf("ServiceMonitor endpoint %v, service ports %v", ep, svcPorts)
	}
	if !strings.Contains(r.notes, "https://weft.example.com/") {
		t.Errorf("NOTES.txt:\n%s", r.notes)
	}
}

// Replicas decide the PodDisruptionBudget: none for one replica (it would
// block node drains), one under an HPA whose minimum is 2; without the
// migration Job the servers migrate at start; metrics off drops the port.
func TestChartReplicasAndSwitches(t *testing.T) {
	t.Parallel()
	r := mustRender(t, database+"server: {replicas: 1}\nmetrics: {enabled: false}\nmigrations: {job: false}\nauth: {mode: none}\n")
	wantObjects(t, r, "Deployment/prod-weft", "Service/prod-weft", "Secret/prod-weft")
	d := get[*appsv1.Deployment](t, r, "Deployment", fullname)
	c := container(t, &d.Spec.Template.Spec)
	wantValue(t, c, "WEFT_MIGRATE", "true")
	wantValue(t, c, "WEFT_AUTH", "none")
	if _, ok := env(c)["WEFT_METRICS_ADDR"]; ok || len(c.Ports) != 1 {
		t.Errorf("metrics off, yet ports %v, WEFT_METRICS_ADDR %v", c.Ports, env(c)["WEFT_METRICS_ADDR"])
	}
	if !strings.Contains(r.notes, "WARNING: auth.mode is none") {
		t.Errorf("NOTES.txt:\n%s", r.notes)
	}

	r = mustRender(t, database+"server: {replicas: 1, autoscaling: {enabled: true, minReplicas: 2, maxReplicas: 5}}\n")
	wantObjects(t, r, "Deployment/prod-weft", "Service/prod-weft", "Secret/prod-weft", "PodDisruptionBudget/prod-weft",
		"HorizontalPodAutoscaler/prod-weft", "Secret/prod-weft-migrate", "Job/prod-weft-migrate")
	hpa := get[*autoscalingv2.HorizontalPodAutoscaler](t, r, "HorizontalPodAutoscaler", fullname)
	if hpa.Spec.ScaleTargetRef.Name != fullname || *hpa.Spec.Metrics[0].Resource.Target.AverageUtilization != 70 {
		t.Errorf("hpa %+v", hpa.Spec)
	}

	r = mustRender(t, database+`
auth: {mode: jwt, jwt: {jwksUrl: "https://id.example.com/jwks.json", issuer: "https://id.example.com", audience: weft}}
server: {env: {WEFT_CORS_ORIGINS: "https://app.example.com", WEFT_WORKERS: 0}, preStopSleepSeconds: 0, terminationGracePeriodSeconds: 45}
`)
	c = container(t, &get[*appsv1.Deployment](t, r, "Deployment", fullname).Spec.Template.Spec)
	wantValue(t, c, "WEFT_AUTH", "jwt")
	wantValue(t, c, "WEFT_JWT_JWKS_URL", "https://id.example.com/jwks.json")
	wantValue(t, c, "WEFT_JWT_TENANT_CLAIM", "tenant")
	wantValue(t, c, "WEFT_CORS_ORIGINS", "https://app.example.com")
	wantValue(t, c, "WEFT_WORKERS", "0")
	if c.Lifecycle != nil {
		t.Errorf("preStop %+v with preStopSleepSeconds 0", c.Lifecycle)
	}
}

// Values that cannot work are refused at render time, naming what to set.
func TestChartRefusesBadValues(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, values, want string }{
		{"no database", "", "set database.url"},
		{"two databases", "database: {url: postgres://db/weft, existingSecret: pg}", "not both"},
		{"typo", database + "server: {replica: 3}", "additional properties 'replica' not allowed"},
		{"bad auth mode", database + "auth: {mode: basic}", "auth/mode"},
		{"jwt without issuer", database + "auth: {mode: jwt, jwt: {jwksUrl: https://id.example.com/jwks, audience: weft}}", "auth.jwt.issuer"},
		{"grace below the drain", database + "server: {terminationGracePeriodSeconds: 40}", "must exceed"},
		{"service monitor without metrics", database + "metrics: {enabled: false, serviceMonitor: {enabled: true}}", "needs metrics.enabled"},
		{"worker without image", database + "workerKey: {value: k}\nworkers: {js: {enabled: true}}", "workers.js.image.repository"},
		{"worker without key", database + "workers: {js: {enabled: true, image: {repository: a, tag: b}}}", "set workerKey.value"},
		{"hpa and keda", database + "workerKey: {value: k}\nworkers: {js: {enabled: true, image: {repository: a, tag: b}, autoscaling: {enabled: true}, keda: {enabled: true}}}", "choose one"},
		{"unknown worker language", database + "workers: {go: {enabled: true}}", "additional properties 'go' not allowed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := render(t, c.values)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("render error %v, want one saying %q", err, c.want)
			}
		})
	}
}

// The decoder the tests rely on is strict: a misspelt or duplicated field
// fails, as it would fail kubectl apply --validate=strict.
func TestDecoderIsStrict(t *testing.T) {
	t.Parallel()
	ok := "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec:\n  ports: [{port: 1}]\n"
	if _, err := decode("ok", ok); err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string]string{
		"unknown field":    strings.Replace(ok, "port: 1", "port: 1, targetport: 2", 1),
		"duplicated field": ok + "  type: ClusterIP\n  type: NodePort\n",
		"crd misspelt":     "apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {name: a}\nspec: {scaleTargetRef: {name: a}, minReplicasCount: 1, triggers: [{type: cpu, metadata: {}}]}\n",
		"crd incomplete":   "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: a}\nspec: {selector: {matchLabels: {a: b}}}\n",
	} {
		if _, err := decode(name, doc); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}
