package helm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/weftdev/weft/internal/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

const (
	chartDir  = "weft"
	release   = "prod"
	namespace = "agents"
	fullname  = "prod-weft" // the release name and the chart's
)

// codecs decode the built-in kinds the chart renders, strictly: an unknown
// or duplicated field is an error, as `kubectl apply --validate=strict`.
var codecs = func() serializer.CodecFactory {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme,
		autoscalingv2.AddToScheme, policyv1.AddToScheme, networkingv1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict)
}()

// object is one rendered manifest: typed for built-in kinds, unstructured
// (with its strict subset decoded in spec) for the CRDs.
type object struct {
	file, kind, name string
	typed            runtime.Object
	u                *unstructured.Unstructured
}

// rendered is a release's manifests and notes.
type rendered struct {
	objects []object
	notes   string
}

// get returns the object kind/name, failing t when it was not rendered.
func get[T runtime.Object](t *testing.T, r *rendered, kind, name string) T {
	t.Helper()
	for _, o := range r.objects {
		if o.kind == kind && o.name == name {
			v, ok := o.typed.(T)
			if !ok {
				t.Fatalf("%s/%s is a %T", kind, name, o.typed)
			}
			return v
		}
	}
	t.Fatalf("%s/%s not rendered; rendered: %v", kind, name, r.names())
	var zero T
	return zero
}

// crd returns the custom resource kind/name.
func (r *rendered) crd(t *testing.T, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range r.objects {
		if o.kind == kind && o.name == name && o.u != nil {
			return o.u
		}
	}
	t.Fatalf("%s/%s not rendered; rendered: %v", kind, name, r.names())
	return nil
}

// names lists "Kind/name" of every manifest, sorted.
func (r *rendered) names() []string {
	var out []string
	for _, o := range r.objects {
		out = append(out, o.kind+"/"+o.name)
	}
	sort.Strings(out)
	return out
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	return ch
}

// render renders the chart with values (YAML) as `helm install prod -n
// agents -f values.yaml` would, in strict mode (a template reading a value
// that does not exist fails), and decodes every manifest.
func render(t *testing.T, values string) (*rendered, error) {
	t.Helper()
	ch := loadChart(t)
	vals, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		t.Fatalf("values: %v", err)
	}
	top, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: release, Namespace: namespace,
		Revision: 1, IsInstall: true}, nil)
	if err != nil {
		return nil, err
	}
	files, err := engine.Engine{Strict: true}.Render(ch, top)
	if err != nil {
		return nil, err
	}
	r := &rendered{notes: files[chartDir+"/templates/NOTES.txt"]}
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if !strings.HasSuffix(p, ".yaml") {
			continue
		}
		for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(files[p], -1) {
			if isEmptyDoc(doc) {
				continue
			}
			o, err := decode(p, doc)
			if err != nil {
				t.Fatalf("%s: %v\n%s", p, err, doc)
			}
			r.objects = append(r.objects, o)
		}
	}
	checkRelease(t, r)
	return r, nil
}

// mustRender is render that fails t on a render error.
func mustRender(t *testing.T, values string) *rendered {
	t.Helper()
	r, err := render(t, values)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return r
}

func isEmptyDoc(doc string) bool {
	for _, l := range strings.Split(doc, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

// decode decodes one manifest: a CRD's as unstructured plus a strict
// decode of the fields the chart sets, a built-in kind strictly into its
// API type.
func decode(file, doc string) (object, error) {
	js, err := yaml.YAMLToJSONStrict([]byte(doc)) // a duplicated key is an error
	if err != nil {
		return object{}, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		return object{}, err
	}
	o := object{file: file, kind: u.GetKind(), name: u.GetName()}
	switch gv := u.GroupVersionKind().GroupVersion().String(); gv {
	case "keda.sh/v1alpha1", "monitoring.coreos.com/v1":
		o.u = u
		var known crdSubset
		switch u.GetKind() {
		case "ScaledObject":
			known = &scaledObject{}
		case "ServiceMonitor":
			known = &serviceMonitor{}
		default:
			return o, fmt.Errorf("unexpected kind %s of %s", u.GetKind(), gv)
		}
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.DisallowUnknownFields()
		if err := dec.Decode(known); err != nil {
			return o, fmt.Errorf("%s: %w", u.GetKind(), err)
		}
		return o, known.check()
	}
	obj, _, err := codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
	if err != nil {
		return o, err
	}
	o.typed = obj
	return o, nil
}

// crdSubset is the part of a CRD's schema the chart uses, with its
// required fields: decoding into it with unknown fields refused catches a
// misspelt field the API server would drop (or refuse).
type crdSubset interface{ check() error }

type crdMeta struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
}

// scaledObject is KEDA's ScaledObject (keda.sh/v1alpha1), the fields the
// chart sets.
type scaledObject struct {
	crdMeta `json:",inline"`
	Spec    struct {
		ScaleTargetRef struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Name       string `json:"name"`
		} `json:"scaleTargetRef"`
		MinReplicaCount *int32 `json:"minReplicaCount"`
		MaxReplicaCount *int32 `json:"maxReplicaCount"`
		PollingInterval *int32 `json:"pollingInterval"`
		CooldownPeriod  *int32 `json:"cooldownPeriod"`
		Triggers        []struct {
			Type     string            `json:"type"`
			Metadata map[string]string `json:"metadata"` // KEDA's trigger metadata: strings only
		} `json:"triggers"`
	} `json:"spec"`
}

func (s *scaledObject) check() error {
	if s.Spec.ScaleTargetRef.Name == "" || len(s.Spec.Triggers) == 0 {
		return fmt.Errorf("ScaledObject needs spec.scaleTargetRef.name and spec.triggers")
	}
	for _, tr := range s.Spec.Triggers {
		if tr.Type == "" || tr.Metadata == nil {
			return fmt.Errorf("ScaledObject trigger needs type and metadata")
		}
		if tr.Type == "prometheus" {
			for _, k := range []string{"serverAddress", "query", "threshold"} {
				if tr.Metadata[k] == "" {
					return fmt.Errorf("ScaledObject prometheus trigger needs metadata.%s", k)
				}
			}
		}
	}
	return nil
}

// serviceMonitor is the Prometheus Operator's ServiceMonitor
// (monitoring.coreos.com/v1), the fields the chart sets.
type serviceMonitor struct {
	crdMeta `json:",inline"`
	Spec    struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}

func (s *serviceMonitor) check() error {
	if len(s.Spec.Selector.MatchLabels) == 0 || len(s.Spec.Endpoints) == 0 {
		return fmt.Errorf("ServiceMonitor needs spec.selector and spec.endpoints")
	}
	for _, e := range s.Spec.Endpoints {
		if e.Port == "" {
			return fmt.Errorf("ServiceMonitor endpoint needs a port")
		}
	}
	return nil
}

// checkRelease checks what every release must satisfy, whatever its values:
// names and labels Kubernetes accepts, the release's namespace, workloads
// whose selectors match their pods, containers whose probes and mounts
// resolve, Secret references the chart renders, Services targeting ports
// their pods name.
func checkRelease(t *testing.T, r *rendered) {
	t.Helper()
	seen := map[string]bool{}
	for _, o := range r.objects {
		id := o.kind + "/" + o.name
		if seen[id] {
			t.Errorf("%s rendered twice", id)
		}
		seen[id] = true
		if errs := validation.IsDNS1123Subdomain(o.name); len(errs) > 0 || len(o.name) > 63 {
			t.Errorf("%s: bad name: %v", id, errs)
		}
		meta := objectMeta(o)
		if meta.Namespace != namespace {
			t.Errorf("%s: namespace %q, want %q", id, meta.Namespace, namespace)
		}
		for k, v := range meta.Labels {
			if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(errs) > 0 {
				t.Errorf("%s: label %s=%s: %v", id, k, v, errs)
			}
		}
		if meta.Labels["app.kubernetes.io/instance"] != release || meta.Labels["app.kubernetes.io/component"] == "" {
			t.Errorf("%s: labels %v lack the instance or component", id, meta.Labels)
		}
		switch v := o.typed.(type) {
		case *appsv1.Deployment:
			checkSelector(t, id, v.Spec.Selector, v.Spec.Template.Labels)
			checkPod(t, r, id, &v.Spec.Template.Spec)
		case *batchv1.Job:
			checkPod(t, r, id, &v.Spec.Template.Spec)
		case *corev1.Service:
			if errs := validation.IsDNS1035Label(o.name); len(errs) > 0 {
				t.Errorf("%s: a Service's name must be a DNS-1035 label: %v", id, errs)
			}
			pods := podsSelectedBy(r, labels.SelectorFromSet(v.Spec.Selector))
			if len(pods) == 0 {
				t.Errorf("%s selects no pod template", id)
			}
			for _, p := range v.Spec.Ports {
				for _, pod := range pods {
					if !podHasPort(pod, p.TargetPort.String()) {
						t.Errorf("%s: port %s targets %s, which its pods do not name", id, p.Name, p.TargetPort.String())
					}
				}
			}
		case *policyv1.PodDisruptionBudget:
			if len(podsSelectedBy(r, selector(t, id, v.Spec.Selector))) == 0 {
				t.Errorf("%s selects no pod template", id)
			}
		case *autoscalingv2.HorizontalPodAutoscaler:
			d := get[*appsv1.Deployment](t, r, v.Spec.ScaleTargetRef.Kind, v.Spec.ScaleTargetRef.Name)
			if d.Spec.Replicas != nil {
				t.Errorf("%s scales %s, which sets replicas too (each apply would reset them)", id, d.Name)
			}
			if v.Spec.MinReplicas == nil || *v.Spec.MinReplicas < 1 || v.Spec.MaxReplicas < *v.Spec.MinReplicas {
				t.Errorf("%s: replicas %v to %d", id, v.Spec.MinReplicas, v.Spec.MaxReplicas)
			}
			for _, c := range d.Spec.Template.Spec.Containers {
				if c.Resources.Requests.Cpu().IsZero() {
					t.Errorf("%s: scales on CPU, but %s's container %s requests none", id, d.Name, c.Name)
				}
			}
		}
	}
}

// objectMeta is o's metadata.
func objectMeta(o object) metav1.ObjectMeta {
	if o.u != nil {
		return metav1.ObjectMeta{Name: o.u.GetName(), Namespace: o.u.GetNamespace(), Labels: o.u.GetLabels()}
	}
	m, err := apimeta.Accessor(o.typed)
	if err != nil {
		panic(err)
	}
	return metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace(), Labels: m.GetLabels()}
}

func selector(t *testing.T, id string, s *metav1.LabelSelector) labels.Selector {
	t.Helper()
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil || s == nil || len(s.MatchLabels) == 0 {
		t.Fatalf("%s: selector %v: %v", id, s, err)
	}
	return sel
}

func checkSelector(t *testing.T, id string, s *metav1.LabelSelector, podLabels map[string]string) {
	t.Helper()
	if !selector(t, id, s).Matches(labels.Set(podLabels)) {
		t.Errorf("%s: selector %v does not match its pod labels %v", id, s.MatchLabels, podLabels)
	}
}

// podsSelectedBy returns the pod templates of Deployments whose labels sel
// matches.
func podsSelectedBy(r *rendered, sel labels.Selector) []*corev1.PodSpec {
	var out []*corev1.PodSpec
	for _, o := range r.objects {
		if d, ok := o.typed.(*appsv1.Deployment); ok && sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			out = append(out, &d.Spec.Template.Spec)
		}
	}
	return out
}

func podHasPort(pod *corev1.PodSpec, name string) bool {
	for _, c := range pod.Containers {
		for _, p := range c.Ports {
			if p.Name == name || fmt.Sprint(p.ContainerPort) == name {
				return true
			}
		}
	}
	return false
}

// checkPod checks a pod template: images, non-root and read-only, probes
// on ports the container names, mounts of volumes it has, and every
// secretKeyRef either to a Secret of the release holding that key or to a
// Secret the values named.
func checkPod(t *testing.T, r *rendered, id string, pod *corev1.PodSpec) {
	t.Helper()
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("%s mounts a service account token", id)
	}
	sc := pod.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != 65532 {
		t.Errorf("%s: pod securityContext %+v, want runAsNonRoot and uid 65532", id, sc)
	}
	volumes := map[string]bool{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = true
	}
	if len(pod.Containers) == 0 {
		t.Fatalf("%s has no container", id)
	}
	for _, c := range pod.Containers {
		cid := id + " container " + c.Name
		if c.Image == "" || strings.HasSuffix(c.Image, ":") || strings.HasPrefix(c.Image, ":") {
			t.Errorf("%s: image %q", cid, c.Image)
		}
		if c.SecurityContext == nil || c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
			t.Errorf("%s allows privilege escalation", cid)
		}
		for _, p := range []*corev1.Probe{c.StartupProbe, c.ReadinessProbe, c.LivenessProbe} {
			if p != nil && (p.HTTPGet == nil || !podHasPort(&corev1.PodSpec{Containers: []corev1.Container{c}}, p.HTTPGet.Port.String())) {
				t.Errorf("%s: probe %+v is not an HTTP GET on a port the container names", cid, p.ProbeHandler)
			}
		}
		tmp := false
		for _, m := range c.VolumeMounts {
			if !volumes[m.Name] {
				t.Errorf("%s mounts %s, which the pod lacks", cid, m.Name)
			}
			tmp = tmp || m.MountPath == "/tmp"
		}
		if !tmp {
			t.Errorf("%s has no writable /tmp", cid)
		}
		names := map[string]bool{}
		for _, e := range c.Env {
			if names[e.Name] {
				t.Errorf("%s sets %s twice", cid, e.Name)
			}
			names[e.Name] = true
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				ref := e.ValueFrom.SecretKeyRef
				if s := ownSecret(r, ref.Name); s != nil {
					if _, ok := s.StringData[ref.Key]; !ok {
						t.Errorf("%s: %s reads key %s of Secret %s, which has %v", cid, e.Name, ref.Key, ref.Name, keys(s.StringData))
					}
				} else if !strings.HasPrefix(ref.Name, "existing-") { // the Secrets the test's values name
					t.Errorf("%s: %s reads Secret %s, which neither the release nor the values make", cid, e.Name, ref.Name)
				}
			}
		}
	}
}

// ownSecret returns the release's Secret name, nil when it renders none.
func ownSecret(r *rendered, name string) *corev1.Secret {
	for _, o := range r.objects {
		if s, ok := o.typed.(*corev1.Secret); ok && s.Name == name {
			return s
		}
	}
	return nil
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// container returns the only container of a Deployment or Job.
func container(t *testing.T, pod *corev1.PodSpec) corev1.Container {
	t.Helper()
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	return pod.Containers[0]
}

// env returns a container's variables by name.
func env(c corev1.Container) map[string]corev1.EnvVar {
	out := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		out[e.Name] = e
	}
	return out
}

// wantSecretRef checks that variable name of c comes from key of Secret
// secret.
func wantSecretRef(t *testing.T, c corev1.Container, name, secret, key string) {
	t.Helper()
	e, ok := env(c)[name]
	if !ok || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
		t.Errorf("container %s: %s is %+v, want it from Secret %s key %s", c.Name, name, e, secret, key)
		return
	}
	if ref := e.ValueFrom.SecretKeyRef; ref.Name != secret || ref.Key != key {
		t.Errorf("container %s: %s from Secret %s key %s, want %s key %s", c.Name, name, ref.Name, ref.Key, secret, key)
	}
}

// wantValue checks that variable name of c is value.
func wantValue(t *testing.T, c corev1.Container, name, value string) {
	t.Helper()
	if e, ok := env(c)[name]; !ok || e.ValueFrom != nil || e.Value != value {
		t.Errorf("container %s: %s is %+v, want %q", c.Name, name, e, value)
	}
}

// wantObjects checks that the release is exactly these manifests: nothing
// of a disabled feature is rendered.
func wantObjects(t *testing.T, r *rendered, want ...string) {
	t.Helper()
	sort.Strings(want)
	if got := r.names(); !slices.Equal(got, want) {
		t.Errorf("rendered %v\nwant     %v", got, want)
	}
}
