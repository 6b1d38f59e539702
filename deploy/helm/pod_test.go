package helm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server/servertest"
)

// What the chart's pods would run, run for real: the migration Job's
// command and environment (the Secrets' values resolved as the kubelet
// would) on an empty database, then the server container's on it. Its
// probes answer on the ports they name without a credential while the API
// wants one (WEFT_AUTH), the metrics port serves the series the KEDA query
// reads under the labels it names, and SIGTERM drains it within the pod's
// grace period. Without the Job, the server refuses the database
// (WEFT_MIGRATE=false).
func TestChartServerPodRuns(t *testing.T) {
	t.Parallel()
	bin := servertest.Binary(t)
	dsn := emptyDatabase(t)
	values := func(httpPort, metricsPort int) string {
		return fmt.Sprintf(`
database: {url: %q}
server:
  port: %d
  builtinGraphs: true
  env: {WEFT_WORKERS: 0}
metrics: {port: %d}
workerKey: {value: weft_placeholder}
workers:
  js:
    enabled: true
    image: {repository: agents-js, tag: v1}
    graphs: [echo_chat]
    keda: {enabled: true}
`, dsn, httpPort, metricsPort)
	}
	r := mustRender(t, values(freePort(t), freePort(t)))
	d := get[*appsv1.Deployment](t, r, "Deployment", fullname)
	server := container(t, &d.Spec.Template.Spec)
	job := container(t, &get[*batchv1.Job](t, r, "Job", fullname+"-migrate").Spec.Template.Spec)

	// Before the Job, the server container refuses the empty database.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a server that starts is killed
	defer cancel()
	early := exec.CommandContext(ctx, bin, server.Args...)
	early.Env = podEnv(t, r, server)
	early.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := early.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "run with -migrate=true") {
		t.Fatalf("server before the migration Job: %v\n%s", err, out)
	}

	// The Job.
	cmd := exec.Command(bin, job.Args...)
	cmd.Env = podEnv(t, r, job)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "schema migrated") {
		t.Fatalf("migration Job: %v\n%s", err, out)
	}

	// The server, on ports free now (other tests' servers take ports too).
	httpPort, metricsPort := freePort(t), freePort(t)
	r = mustRender(t, values(httpPort, metricsPort))
	d = get[*appsv1.Deployment](t, r, "Deployment", fullname)
	server = container(t, &d.Spec.Template.Spec)
	base := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	logf, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	srv := exec.Command(bin, server.Args...)
	srv.Env = podEnv(t, r, server)
	srv.Stdout, srv.Stderr = logf, logf
	srv.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	t.Cleanup(func() {
		_ = srv.Process.Kill() // a no-op once it has exited
		<-exited
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("server log:\n%s", b)
		}
	})

	probe := func(p *corev1.Probe) string {
		port := p.HTTPGet.Port.String()
		for _, cp := range server.Ports {
			if cp.Name == port {
				return fmt.Sprintf("http://127.0.0.1:%d%s", cp.ContainerPort, p.HTTPGet.Path)
			}
		}
		t.Fatalf("probe port %s is not the container's", port)
		return ""
	}
	deadline := time.Now().Add(20 * time.Second)
	for status(t, probe(server.StartupProbe), "") != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("the startup probe never passed")
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("the server exited: %v", err)
		default:
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, p := range []*corev1.Probe{server.ReadinessProbe, server.LivenessProbe} {
		if got := status(t, probe(p), ""); got != http.StatusOK {
			t.Errorf("probe GET %s: %d, want 200 without a credential", p.HTTPGet.Path, got)
		}
	}
	if got := status(t, base+"/info", ""); got != http.StatusUnauthorized {
		t.Errorf("API without a key: %d, want 401 (WEFT_AUTH)", got)
	}

	// A queued run, as the workers' KEDA query counts: the server has no in-process workers here.
	keys := exec.Command(bin, "keys", "create", "--tenant", "acme")
	keys.Env = podEnv(t, r, job)
	keyOut, err := keys.Output()
	if err != nil {
		t.Fatalf("weft keys create: %v", err)
	}
	key := strings.TrimSpace(string(keyOut))
	thread := call(t, http.MethodPost, base+"/threads", key, `{}`)
	id := regexp.MustCompile(`"thread_id":"([^"]+)"`).FindStringSubmatch(thread)
	if id == nil {
		t.Fatalf("POST /threads: %s", thread)
	}
	call(t, http.MethodPost, base+"/threads/"+id[1]+"/runs", key, `{"assistant_id":"echo_chat","input":{"messages":[]}}`)

	so := r.crd(t, "ScaledObject", fullname+"-worker-js")
	triggers, _, _ := unstructured.NestedSlice(so.Object, "spec", "triggers")
	query := triggers[0].(map[string]any)["metadata"].(map[string]any)["query"].(string)
	metric := regexp.MustCompile(`(\w+)\{`).FindStringSubmatch(query)[1]
	var state, graph string
	for _, m := range regexp.MustCompile(`(\w+)(=~?)"([^"]*)"`).FindAllStringSubmatch(query, -1) {
		switch m[1] {
		case "state":
			state = m[3]
		case "graph_id":
			graph = m[3]
		}
	}
	series := regexp.MustCompile(`(?m)^` + metric + `\{graph_id="echo_chat",state="queued"\} 1$`)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		body := get200(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
		if series.MatchString(body) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics port lacks %s; the KEDA query is %s; it serves:\n%s", series, query, grep(body, metric))
		}
	}
	if !regexp.MustCompile(`^(`+state+`)$`).MatchString("queued") || !regexp.MustCompile(`^(`+graph+`)$`).MatchString("echo_chat") {
		t.Errorf("the KEDA query %s does not count the queued run of echo_chat", query)
	}

	// SIGTERM (after the preStop sleep, which the kubelet does): the server drains and exits 0 within the grace
	// period left.
	start := time.Now()
	_ = srv.Process.Signal(syscall.SIGTERM)
	grace := time.Duration(*d.Spec.Template.Spec.TerminationGracePeriodSeconds-server.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Errorf("server after SIGTERM: %v", err)
		}
	case <-time.After(grace):
		t.Errorf("server still running %s after SIGTERM: the kubelet would kill it", grace)
	}
	t.Logf("drained in %s", time.Since(start).Round(time.Millisecond))
}

// podEnv is c's environment as the kubelet gives it: values, the rendered
// Secrets' keys, the pod's name.
func podEnv(t *testing.T, r *rendered, c corev1.Container) []string {
	t.Helper()
	out := []string{"PATH=" + os.Getenv("PATH")}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			out = append(out, e.Name+"="+e.Value)
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			s := ownSecret(r, ref.Name)
			if s == nil {
				t.Fatalf("%s: Secret %s not rendered", e.Name, ref.Name)
			}
			v, ok := s.StringData[ref.Key]
			if !ok && (ref.Optional == nil || !*ref.Optional) {
				t.Fatalf("%s: Secret %s has no %s", e.Name, ref.Name, ref.Key)
			}
			if ok {
				out = append(out, e.Name+"="+v)
			}
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			out = append(out, e.Name+"="+fullname+"-5d8f9c-x7k2p")
		default:
			t.Fatalf("%s: %+v is not resolved here", e.Name, e.ValueFrom)
		}
	}
	return out
}

// emptyDatabase creates a database without any schema on the test cluster
// and returns its URL.
func emptyDatabase(t *testing.T) string {
	t.Helper()
	admin := pgtest.Pool(t)
	name := fmt.Sprintf("weft_chart_%d", time.Now().UnixNano())
	if _, err := admin.Exec(context.Background(), "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", ":0") // free on every address: the server listens on 0.0.0.0
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// status is the status of GET url with key (none when empty); 0 when the
// request fails.
func status(t *testing.T, url, key string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func get200(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

// call sends body with key and returns the 200 answer.
func call(t *testing.T, method, url, key, body string) string {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader([]byte(body)))
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	return string(b)
}

// grep returns the lines of s containing sub.
func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
