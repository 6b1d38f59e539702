package image_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/weftdev/weft/deploy/image"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// buildStatic builds the server as `make image` does: CGO_ENABLED=0, the
// version stamped in.
func buildStatic(t *testing.T, version string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "weft")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags",
		"-s -w -X github.com/weftdev/weft/internal/server.Version="+version, "-o", out, "github.com/weftdev/weft/cmd/server")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// TestImage builds the server's image, writes it as an OCI layout and a
// docker tarball, reads both back, unpacks the layout's layers into a root
// and runs the server from it as the image's config says (chroot, user,
// working directory, environment plus DATABASE_URL, entrypoint), in a
// network namespace of its own: /ok answers on the declared port, the
// process is uid 65532, the health check passes (and failed before), API
// keys are on, and /info reports the image's version.
func TestImage(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test runs the image as a container runtime does: chroot and a network namespace need root")
	}
	began := time.Now()
	version := fmt.Sprintf("0.0.0-test.%d", time.Now().UnixNano()%1e6)
	bin := buildStatic(t, version)
	t.Logf("static build: %s", time.Since(began).Round(time.Millisecond))

	built, err := image.Build(image.Options{Binary: bin, Version: version, Revision: "0123abc"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := image.WriteLayout(filepath.Join(dir, "oci"), built, version); err != nil {
		t.Fatal(err)
	}
	if err := image.WriteTarball(filepath.Join(dir, "weft.tar"), built, "weft:"+version); err != nil {
		t.Fatal(err)
	}
	// Writing again replaces the layout.
	if err := image.WriteLayout(filepath.Join(dir, "oci"), built, version); err != nil {
		t.Fatal(err)
	}

	// Read back what was written, through the library.
	lp, err := layout.FromPath(filepath.Join(dir, "oci"))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != version {
		t.Fatalf("layout index: %+v, want one image named %s", im.Manifests, version)
	}
	img, err := lp.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := built.Digest()
	if got, _ := img.Digest(); got != want {
		t.Fatalf("layout image digest %s, built %s", got, want)
	}
	tag, _ := name.NewTag("weft:" + version)
	fromTar, err := tarball.ImageFromPath(filepath.Join(dir, "weft.tar"), &tag)
	if err != nil {
		t.Fatal(err)
	}
	wantCfg, _ := built.ConfigName()
	if got, _ := fromTar.ConfigName(); got != wantCfg {
		t.Fatalf("docker tarball config %s, built %s", got, wantCfg)
	}
	// Reproducible: the same binary gives the same image.
	again, err := image.Build(image.Options{Binary: bin, Version: version, Revision: "0123abc"})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := again.Digest(); d != want {
		t.Fatalf("a second build has digest %s, the first %s", d, want)
	}

	compressed, uncompressed, err := image.Sizes(img)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image %s: %.1f MiB compressed, %.1f MiB uncompressed (%d and %d bytes)",
		want, float64(compressed)/(1<<20), float64(uncompressed)/(1<<20), compressed, uncompressed)

	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	checkConfig(t, cf, version)

	root := filepath.Join(t.TempDir(), "rootfs")
	unpack(t, img, root)
	checkRoot(t, root)

	ns := newNetns(t)
	dsn := forwardDB(t, ns, pgtest.DSN(t))
	c := &container{root: root, cfg: cf.Config, env: []string{"DATABASE_URL=" + dsn}, ns: ns}
	argv := append(append([]string(nil), cf.Config.Entrypoint...), cf.Config.Cmd...)
	health := cf.Config.Healthcheck.Test[1:] // after "CMD"

	// The health check fails while no server runs.
	if code, out, errOut := c.run(t, 10*time.Second, health...); code == 0 {
		t.Fatalf("health check passed with no server: %s%s", out, errOut)
	}

	var logs strings.Builder
	srv := c.command(t, argv...)
	srv.Stdout, srv.Stderr = &logs, &logs
	if err := c.start(srv); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = syscall.Kill(srv.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if t.Failed() {
			t.Logf("server output:\n%s", logs.String())
		}
	})

	port := strings.TrimSuffix(onlyKey(t, cf.Config.ExposedPorts), "/tcp")
	base := "http://127.0.0.1:" + port
	hc := ns.client()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := hc.Get(base + "/ok")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-exited:
			stopped = true
			t.Fatalf("the server exited before answering /ok: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s/ok: no 200 within 30 s (last error %v)", base, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("GET /ok answered %s after the start", time.Since(began).Round(time.Millisecond))

	for _, field := range []string{"Uid", "Gid"} {
		ids := procIDs(t, srv.Process.Pid, field)
		for _, id := range ids {
			if id != "65532" {
				t.Fatalf("server process %s: %v, want 65532 for all", field, ids)
			}
		}
	}

	if code, out, errOut := c.run(t, 10*time.Second, health...); code != 0 {
		t.Fatalf("health check %v: exit %d: %s%s", health, code, out, errOut)
	}

	// API keys are on: /info needs one; `weft keys create` in the image makes one.
	if resp, err := hc.Get(base + "/info"); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /info without a key: %d, want 401", resp.StatusCode)
	}
	code, key, errOut := c.run(t, 20*time.Second, append(slices.Clone(cf.Config.Entrypoint), "keys", "create", "--scope", "admin", "--name", "image test")...)
	if code != 0 {
		t.Fatalf("weft keys create: exit %d: %s", code, errOut)
	}
	req, _ := http.NewRequest("GET", base+"/info", nil)
	req.Header.Set("x-api-key", strings.TrimSpace(key))
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var info struct {
		Version string `json:"version"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &info) != nil || info.Version != version {
		t.Fatalf("GET /info with the key: %d %s, want version %s", resp.StatusCode, body, version)
	}

	// SIGTERM (docker stop) ends it cleanly.
	_ = syscall.Kill(srv.Process.Pid, syscall.SIGTERM)
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Fatalf("server after SIGTERM: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("server still running 15 s after SIGTERM")
	}
	t.Logf("TestImage: %s", time.Since(began).Round(time.Millisecond))
}

func onlyKey(t *testing.T, m map[string]struct{}) string {
	t.Helper()
	if len(m) != 1 {
		t.Fatalf("ExposedPorts %v: want one port", m)
	}
	for k := range m {
		return k
	}
	return ""
}

// checkConfig checks what the config declares.
func checkConfig(t *testing.T, cf *v1.ConfigFile, version string) {
	t.Helper()
	c := cf.Config
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want linux/%s", cf.OS, cf.Architecture, runtime.GOARCH)
	}
	if !slices.Equal(c.Entrypoint, []string{"/weft"}) || len(c.Cmd) != 0 {
		t.Errorf("Entrypoint %q Cmd %q, want [/weft] and none", c.Entrypoint, c.Cmd)
	}
	if c.User != "65532:65532" || c.WorkingDir != "/home/weft" {
		t.Errorf("User %q WorkingDir %q", c.User, c.WorkingDir)
	}
	if _, ok := c.ExposedPorts["8123/tcp"]; !ok || len(c.ExposedPorts) != 1 {
		t.Errorf("ExposedPorts %v, want 8123/tcp", c.ExposedPorts)
	}
	for _, e := range []string{"WEFT_ADDR=0.0.0.0:8123", "WEFT_AUTH=keys", "WEFT_LOG_FORMAT=json", "WEFT_BUILTIN_GRAPHS=false"} {
		if !slices.Contains(c.Env, e) {
			t.Errorf("Env %q lacks %s", c.Env, e)
		}
	}
	if h := c.Healthcheck; h == nil || !slices.Equal(h.Test, []string{"CMD", "/weft", "health"}) || h.Interval <= 0 || h.Timeout <= 0 {
		t.Errorf("Healthcheck %+v, want CMD /weft health with an interval and a timeout", h)
	}
	for k, v := range map[string]string{
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.source":   "https://github.com/weftdev/weft",
		"org.opencontainers.image.revision": "0123abc",
	} {
		if c.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
		}
	}
}

// checkRoot checks the unpacked files a process needs.
func checkRoot(t *testing.T, root string) {
	t.Helper()
	passwd, err := os.ReadFile(filepath.Join(root, "etc", "passwd"))
	if err != nil || !strings.Contains(string(passwd), "weft:x:65532:65532:") {
		t.Errorf("/etc/passwd: %q %v", passwd, err)
	}
	if group, err := os.ReadFile(filepath.Join(root, "etc", "group")); err != nil || !strings.Contains(string(group), "weft:x:65532:") {
		t.Errorf("/etc/group: %q %v", group, err)
	}
	certs, err := os.ReadFile(filepath.Join(root, "etc", "ssl", "certs", "ca-certificates.crt"))
	if err != nil || !strings.Contains(string(certs), "BEGIN CERTIFICATE") {
		t.Errorf("CA certificates: %d bytes, %v", len(certs), err)
	}
	if fi, err := os.Stat(filepath.Join(root, "tmp")); err != nil || fi.Mode()&os.ModeSticky == 0 || fi.Mode().Perm() != 0o777 {
		t.Errorf("/tmp: %v %v, want drwxrwxrwt", fi.Mode(), err)
	}
	fi, err := os.Stat(filepath.Join(root, "home", "weft"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65532 || st.Gid != 65532 {
		t.Errorf("/home/weft owned by %d:%d, want 65532:65532", st.Uid, st.Gid)
	}
}

// TestBuildRefuses: a binary the image could not run is refused.
func TestBuildRefuses(t *testing.T) {
	t.Parallel()
	notELF := filepath.Join(t.TempDir(), "weft")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, binary, want string }{
		{"dynamic", "/bin/sh", "dynamically linked"},
		{"not ELF", notELF, "not an ELF executable"},
		{"missing", filepath.Join(t.TempDir(), "none"), "not an ELF executable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := image.Build(image.Options{Binary: tc.binary, Version: "1"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Build(%s): %v, want an error saying %q", tc.binary, err, tc.want)
			}
		})
	}
	if _, err := image.Build(image.Options{Binary: "/bin/sh"}); err == nil || !strings.Contains(err.Error(), "Version") {
		t.Fatalf("Build without a version: %v", err)
	}
	// A directory that is not an OCI layout is not replaced.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := image.WriteLayout(dir, nil, "x"); err == nil || !strings.Contains(err.Error(), "not an OCI image layout") {
		t.Fatalf("WriteLayout over a foreign directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "keep")); err != nil {
		t.Fatal("WriteLayout removed a foreign directory's file")
	}
}
