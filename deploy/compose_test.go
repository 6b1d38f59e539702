package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server/servertest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// composeEnv is the environment docker-compose.yml is interpolated with:
// what .env holds after the steps at the top of the file.
var composeEnv = map[string]string{
	"POSTGRES_PASSWORD":   "pw-0123456789abcdef",
	"WEFT_WORKER_API_KEY": "weft_testworkerkey",
}

// loadCompose loads docker-compose.yml at the repository's root with the
// Compose specification's own loader: schema validation on, the project
// named, interpolated with env (and nothing of this process's environment),
// paths resolved against the repository.
func loadCompose(t *testing.T, env map[string]string) (*types.Project, error) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return loadComposeFile(t, root, filepath.Join(root, "docker-compose.yml"), env)
}

// loadComposeFile loads the compose file at path as loadCompose does, its
// paths relative to root.
func loadComposeFile(t *testing.T, root, path string, env map[string]string) (*types.Project, error) {
	t.Helper()
	var list []string
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	opts, err := cli.NewProjectOptions([]string{path},
		cli.WithName("weft-test"), cli.WithWorkingDirectory(root), cli.WithEnv(list),
		cli.WithInterpolation(true), cli.WithResolvedPaths(true), cli.WithConsistency(true),
		cli.WithLoadOptions(func(o *loader.Options) { o.SkipValidation = false }))
	if err != nil {
		t.Fatal(err)
	}
	return opts.LoadProject(context.Background())
}

func mustLoadCompose(t *testing.T) *types.Project {
	t.Helper()
	p, err := loadCompose(t, composeEnv)
	if err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return p
}

// env is a service's environment variable ("" when unset).
func env(s types.ServiceConfig, k string) string {
	if v := s.Environment[k]; v != nil {
		return *v
	}
	return ""
}

// finalUser is the user the last stage of the Dockerfile at path runs as
// ("" when no USER is set: the base image's), following stages built on
// stages of the same file.
func finalUser(t *testing.T, path string) (user string, entrypoint []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ast, err := parser.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	stages, _, err := instructions.Parse(ast.AST, nil)
	if err != nil || len(stages) == 0 {
		t.Fatalf("%s: %v (%d stages)", path, err, len(stages))
	}
	byName := map[string]instructions.Stage{}
	for _, s := range stages {
		if s.Name != "" {
			byName[strings.ToLower(s.Name)] = s
		}
	}
	var walk func(s instructions.Stage, depth int)
	walk = func(s instructions.Stage, depth int) {
		if base, ok := byName[strings.ToLower(s.BaseName)]; ok && depth < 10 {
			walk(base, depth+1)
		}
		for _, c := range s.Commands {
			switch c := c.(type) {
			case *instructions.UserCommand:
				user = c.User
			case *instructions.EntrypointCommand:
				entrypoint = c.CmdLine
			}
		}
	}
	walk(stages[len(stages)-1], 0)
	return user, entrypoint
}

// dockerfile is a Dockerfile make compose-files writes.
type dockerfile struct{ path, text string }

// composeFiles runs what make compose-files runs (weft dockerfile, once per
// worker) on a copy of the project at dir, and returns the Dockerfiles it
// writes by the service that builds them.
func composeFiles(t *testing.T, dir string) map[string]dockerfile {
	t.Helper()
	bin := servertest.Binary(t)
	// Same base name: it is the image's working directory (/deps/<name>).
	cp := filepath.Join(t.TempDir(), filepath.Base(dir))
	if err := os.MkdirAll(cp, 0o755); err != nil {
		t.Fatal(err)
	}
	// The project's own files: not what make compose-files wrote, nor installed packages.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), "Dockerfile") || e.Name() == ".dockerignore" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cp, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]dockerfile{}
	for service, args := range map[string][]string{
		"worker-py": {"-worker", "python", "-o", "Dockerfile.py"},
		"worker-js": {"-worker", "js", "-o", "Dockerfile.js"},
	} {
		path := filepath.Join(cp, args[3])
		cmd := exec.Command(bin, "dockerfile", "-c", filepath.Join(cp, "langgraph.json"), args[0], args[1], "-o", path)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("weft dockerfile %q: %v\n%s", args, err, b)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out[service] = dockerfile{path: path, text: string(b)}
	}
	return out
}

// rootUser tells whether a USER or compose user value is root.
func rootUser(u string) bool {
	name, _, _ := strings.Cut(u, ":")
	return name == "root" || name == "0"
}

// docker-compose.yml, as Compose reads it: the services, their images and
// builds, health checks, start order, the two server replicas, the workers'
// server, users and volumes.
func TestCompose(t *testing.T) {
	t.Parallel()
	p := mustLoadCompose(t)
	root := p.WorkingDir
	generated := composeFiles(t, filepath.Join(root, "examples", "langgraph"))

	t.Run("the schema is checked", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
		if err != nil {
			t.Fatal(err)
		}
		bad := filepath.Join(t.TempDir(), "docker-compose.yml")
		text := strings.Replace(string(b), "\n  postgres:\n", "\n  postgres:\n    restart_policy: always\n", 1)
		if err := os.WriteFile(bad, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := loadComposeFile(t, root, bad, composeEnv); err == nil || !strings.Contains(err.Error(), "restart_policy") {
			t.Fatalf("a service key the specification lacks: %v, want it refused", err)
		}
	})
	t.Run("a password is required", func(t *testing.T) {
		_, err := loadCompose(t, map[string]string{})
		if err == nil || !strings.Contains(err.Error(), "POSTGRES_PASSWORD") {
			t.Fatalf("loaded without POSTGRES_PASSWORD: %v", err)
		}
	})

	names := p.ServiceNames()
	slices.Sort(names)
	if want := []string{"migrate", "postgres", "weft-1", "weft-2", "worker-js", "worker-py"}; !slices.Equal(names, want) {
		t.Fatalf("services %v, want %v", names, want)
	}
	svc := func(name string) types.ServiceConfig { return p.Services[name] }

	t.Run("postgres", func(t *testing.T) {
		pg := svc("postgres")
		if !strings.HasPrefix(pg.Image, "postgres:") || pg.Build != nil {
			t.Errorf("image %q build %v, want the official postgres image", pg.Image, pg.Build)
		}
		if env(pg, "POSTGRES_PASSWORD") != composeEnv["POSTGRES_PASSWORD"] || env(pg, "POSTGRES_USER") != "weft" || env(pg, "POSTGRES_DB") != "weft" {
			t.Errorf("environment %v", pg.Environment)
		}
		hc := pg.HealthCheck
		if hc == nil || hc.Disable || !strings.Contains(strings.Join(hc.Test, " "), "pg_isready -U weft -d weft") {
			t.Errorf("health check %+v, want pg_isready on the weft database", hc)
		}
		if len(pg.Volumes) != 1 || pg.Volumes[0].Type != types.VolumeTypeVolume || pg.Volumes[0].Source != "pgdata" ||
			pg.Volumes[0].Target != "/var/lib/postgresql/data" {
			t.Errorf("volumes %+v, want the named volume pgdata on the data directory", pg.Volumes)
		}
	})

	// The servers' image: the repository's Dockerfile, whose entrypoint the
	// health check and the migrate command run.
	user, entrypoint := finalUser(t, filepath.Join(root, "Dockerfile"))
	if len(entrypoint) != 1 || user == "" || rootUser(user) {
		t.Fatalf("Dockerfile: entrypoint %q user %q, want the weft binary run by a user who is not root", entrypoint, user)
	}

	t.Run("servers", func(t *testing.T) {
		var ports []string
		for _, name := range []string{"weft-1", "weft-2"} {
			s := svc(name)
			if s.Build == nil || s.Build.Context != root || s.Build.Dockerfile != "Dockerfile" || s.Image != svc("weft-1").Image {
				t.Errorf("%s: build %+v image %q, want the repository's Dockerfile, one image for both", name, s.Build, s.Image)
			}
			db, err := url.Parse(env(s, "DATABASE_URL"))
			if err != nil || db.Hostname() != "postgres" || db.User.Username() != "weft" || db.Path != "/weft" {
				t.Errorf("%s: DATABASE_URL %q (%v), want the postgres service's weft database", name, env(s, "DATABASE_URL"), err)
			} else if pw, _ := db.User.Password(); pw != composeEnv["POSTGRES_PASSWORD"] {
				t.Errorf("%s: DATABASE_URL's password %q, want POSTGRES_PASSWORD's", name, pw)
			}
			for k, want := range map[string]string{"WEFT_AUTH": "keys", "WEFT_WORKERS": "0", "WEFT_BUILTIN_GRAPHS": "false",
				"WEFT_MIGRATE": "false", "WEFT_ADDR": "0.0.0.0:8123", "WEFT_WORKER_ID": name} {
				if got := env(s, k); got != want {
					t.Errorf("%s: %s=%q, want %q", name, k, got, want)
				}
			}
			hc := s.HealthCheck
			if hc == nil || hc.Disable || !slices.Equal([]string(hc.Test), []string{"CMD", entrypoint[0], "health"}) {
				t.Errorf("%s: health check %+v, want [CMD %s health] (GET /ok)", name, hc, entrypoint[0])
			}
			for dep, cond := range map[string]string{"postgres": types.ServiceConditionHealthy, "migrate": types.ServiceConditionCompletedSuccessfully} {
				if d, ok := s.DependsOn[dep]; !ok || d.Condition != cond || !d.Required {
					t.Errorf("%s: depends on %s %+v, want condition %s", name, dep, d, cond)
				}
			}
			if len(s.Ports) != 1 || s.Ports[0].Target != 8123 || s.Ports[0].Published == "" {
				t.Errorf("%s: ports %+v, want one published port to 8123", name, s.Ports)
			}
			if len(s.Ports) == 1 {
				ports = append(ports, s.Ports[0].Published)
			}
			if n := s.Networks["default"]; n == nil || !slices.Contains(n.Aliases, "weft") {
				t.Errorf("%s: networks %+v, want the alias weft", name, s.Networks)
			}
			if s.Deploy != nil && s.Deploy.Replicas != nil && *s.Deploy.Replicas != 1 {
				t.Errorf("%s: %d replicas, want one per service", name, *s.Deploy.Replicas)
			}
		}
		if len(ports) == 2 && ports[0] == ports[1] {
			t.Errorf("both servers publish port %s", ports[0])
		}
		m := svc("migrate")
		if m.Image != svc("weft-1").Image || !slices.Equal([]string(m.Command), []string{"migrate"}) || m.Restart != "no" ||
			env(m, "DATABASE_URL") != env(svc("weft-1"), "DATABASE_URL") {
			t.Errorf("migrate: image %q command %q restart %q, want weft migrate once on the servers' database", m.Image, m.Command, m.Restart)
		}
		if d := m.DependsOn["postgres"]; d.Condition != types.ServiceConditionHealthy {
			t.Errorf("migrate: depends on postgres %+v", d)
		}
		if n := m.Networks["default"]; n != nil && slices.Contains(n.Aliases, "weft") {
			t.Errorf("migrate answers to the servers' alias weft")
		}
	})

	t.Run("workers", func(t *testing.T) {
		for _, name := range []string{"worker-py", "worker-js"} {
			s := svc(name)
			if s.Build == nil || s.Build.Context != filepath.Join(root, "examples", "langgraph") || s.Image == "" {
				t.Errorf("%s: build %+v image %q, want a build of examples/langgraph", name, s.Build, s.Image)
				continue
			}
			if _, err := os.Stat(filepath.Join(s.Build.Context, "langgraph.json")); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			want := generated[name]
			if s.Build.Dockerfile != filepath.Base(want.path) {
				t.Errorf("%s: builds %s, want %s (make compose-files)", name, s.Build.Dockerfile, filepath.Base(want.path))
			}
			// A Dockerfile make compose-files wrote is the one it writes now.
			if have, err := os.ReadFile(filepath.Join(s.Build.Context, s.Build.Dockerfile)); err == nil && string(have) != want.text {
				t.Errorf("%s: %s is stale: run make compose-files", name, s.Build.Dockerfile)
			}
			u, err := url.Parse(env(s, "WEFT_URL"))
			if err != nil || u.Scheme != "http" || u.Port() != "8123" {
				t.Errorf("%s: WEFT_URL %q, want http://<a server>:8123", name, env(s, "WEFT_URL"))
			} else {
				// The host is a server: its service name, or an alias every server answers to.
				host, servers := u.Hostname(), 0
				for _, srv := range []string{"weft-1", "weft-2"} {
					if n := svc(srv).Networks["default"]; host == srv || (n != nil && slices.Contains(n.Aliases, host)) {
						servers++
					}
				}
				if servers == 0 || (host != "weft-1" && host != "weft-2" && servers != 2) {
					t.Errorf("%s: WEFT_URL's host %q is not a server (or not every server)", name, host)
				}
			}
			if env(s, "WEFT_API_KEY") != composeEnv["WEFT_WORKER_API_KEY"] {
				t.Errorf("%s: WEFT_API_KEY %q, want WEFT_WORKER_API_KEY's", name, env(s, "WEFT_API_KEY"))
			}
			for _, dep := range []string{"weft-1", "weft-2"} {
				if d := s.DependsOn[dep]; d.Condition != types.ServiceConditionHealthy {
					t.Errorf("%s: depends on %s %+v, want service_healthy", name, dep, d)
				}
			}
		}
	})

	t.Run("no root where the image sets a user", func(t *testing.T) {
		for _, name := range names {
			s := svc(name)
			if rootUser(s.User) {
				t.Errorf("%s runs as %q", name, s.User)
			}
			if s.Build == nil {
				continue
			}
			// An image built here: its Dockerfile's user, unless compose sets one.
			path := filepath.Join(s.Build.Context, s.Build.Dockerfile)
			if g, ok := generated[name]; ok {
				path = g.path
			}
			u, _ := finalUser(t, path)
			if s.User == "" && (u == "" || rootUser(u)) {
				t.Errorf("%s: %s runs as %q (root); set a USER", name, s.Build.Dockerfile, u)
			}
		}
	})

	t.Run("volumes", func(t *testing.T) {
		used := map[string]bool{}
		for _, s := range p.Services {
			for _, v := range s.Volumes {
				if v.Type == types.VolumeTypeVolume {
					used[v.Source] = true
				}
				if v.Type == types.VolumeTypeBind {
					t.Errorf("%s mounts host path %s: images carry what they need", s.Name, v.Source)
				}
			}
		}
		for name := range p.Volumes {
			if !used[name] {
				t.Errorf("volume %s is declared and unused", name)
			}
		}
		if len(p.Volumes) != 1 || !used["pgdata"] {
			t.Errorf("volumes %v, want pgdata", p.Volumes)
		}
	})
}

// The servers' settings in docker-compose.yml, given to the real server
// binary: weft migrate (the migrate service's command) succeeds, two
// servers started with weft-1's and weft-2's environment on one database
// become healthy by the services' own health check command, refuse requests
// without a key, accept a worker key made with `weft keys create`, and report
// what compose set (no in-process workers, no demo graphs, no migration).
func TestComposeServersRun(t *testing.T) {
	t.Parallel()
	p := mustLoadCompose(t)
	bin := servertest.Binary(t)
	dsn := pgtest.DSN(t)
	// The service's environment, the database and port swapped for this
	// test's: compose's hosts do not resolve here.
	serviceEnv := func(s types.ServiceConfig, addr string) []string {
		out := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
		for k, v := range s.Environment {
			switch {
			case v == nil:
			case k == "DATABASE_URL":
				out = append(out, k+"="+dsn)
			case k == "WEFT_ADDR" && addr != "":
				out = append(out, k+"="+addr)
			default:
				out = append(out, k+"="+*v)
			}
		}
		return out
	}
	run := func(s types.ServiceConfig, argv []string, addr string) (string, error) {
		cmd := exec.Command(bin, argv...)
		cmd.Env = serviceEnv(s, addr)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err != nil {
			return stdout.String(), &exitError{err, stderr.String()}
		}
		return stdout.String(), nil
	}

	if _, err := run(p.Services["migrate"], p.Services["migrate"].Command, ""); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	type server struct {
		url, addr string
		cmd       *exec.Cmd
		done      chan struct{}
		log       bytes.Buffer
	}
	var servers []*server
	for _, name := range []string{"weft-1", "weft-2"} {
		s := p.Services[name]
		_, port, _ := net.SplitHostPort(servertest.FreeAddr(t))
		srv := &server{addr: "0.0.0.0:" + port, url: "http://127.0.0.1:" + port, done: make(chan struct{})}
		srv.cmd = exec.Command(bin, s.Command...)
		srv.cmd.Env = serviceEnv(s, srv.addr)
		srv.cmd.Stdout, srv.cmd.Stderr = &srv.log, &srv.log
		srv.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := srv.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = srv.cmd.Wait(); close(srv.done) }()
		t.Cleanup(func() {
			_ = srv.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-srv.done:
			case <-time.After(10 * time.Second):
				_ = srv.cmd.Process.Kill()
				<-srv.done
			}
			if t.Failed() {
				t.Logf("%s log:\n%s", name, srv.log.String())
			}
		})
		servers = append(servers, srv)
	}
	for i, srv := range servers {
		s := p.Services[[]string{"weft-1", "weft-2"}[i]]
		// The health check as Docker runs it, the image's binary path being this build's.
		argv := slices.Clone([]string(s.HealthCheck.Test[2:]))
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, err := run(s, argv, srv.addr)
			if err == nil {
				break
			}
			select {
			case <-srv.done:
				t.Fatalf("%s exited: %s", s.Name, srv.log.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: health check never passed: %v", s.Name, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	key, err := run(p.Services["weft-1"], []string{"keys", "create", "--scope", "worker", "--name", "compose-workers"}, "")
	if err != nil {
		t.Fatalf("keys create: %v", err)
	}
	key = strings.TrimSpace(key)
	for i, srv := range servers {
		name := []string{"weft-1", "weft-2"}[i]
		resp, err := http.Get(srv.url + "/info")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: GET /info without a key: %d, want 401 (WEFT_AUTH=keys)", name, resp.StatusCode)
		}
		req, _ := http.NewRequest("GET", srv.url+"/info", nil)
		req.Header.Set("x-api-key", key)
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var info struct {
			Settings []struct{ Name, Value, Source string }
		}
		err = json.NewDecoder(resp.Body).Decode(&info)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: GET /info with the worker key: %d %v", name, resp.StatusCode, err)
		}
		want := map[string][2]string{"workers": {"0", "WEFT_WORKERS"}, "builtin-graphs": {"false", "WEFT_BUILTIN_GRAPHS"},
			"migrate": {"false", "WEFT_MIGRATE"}, "auth": {"keys", "WEFT_AUTH"}, "worker-id": {name, "WEFT_WORKER_ID"}}
		for _, s := range info.Settings {
			if w, ok := want[s.Name]; ok {
				delete(want, s.Name)
				if s.Value != w[0] || s.Source != w[1] {
					t.Errorf("%s: setting %s = %q from %s, want %q from %s", name, s.Name, s.Value, s.Source, w[0], w[1])
				}
			}
		}
		if len(want) > 0 {
			t.Errorf("%s: settings missing from GET /info: %v", name, want)
		}
	}
}

// exitError is a command's failure with what it printed.
type exitError struct {
	err    error
	stderr string
}

func (e *exitError) Error() string { return e.err.Error() + ": " + e.stderr }
