// Package image builds the Weft server's OCI image without a container
// engine: one layer holding a static weft binary and the few files a
// process needs from an operating system (a non-root user, CA
// certificates, a writable /tmp), on no base image at all, and a config
// that runs it the way docs/production.md describes. Build returns the
// image; WriteLayout and WriteTarball store it as an OCI image layout
// directory (for skopeo, crane, containerd, podman) or a tarball that
// `docker load` reads.
//
// The image is reproducible: every file and the config carry the same
// time (Options.Created, the Unix epoch by default), so the same binary
// gives the same digest.
package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// What the image declares. The user is numeric (65532, distroless's
// "nonroot" number) so that Kubernetes' runAsNonRoot can check it without
// reading /etc/passwd.
const (
	// Entrypoint is the server binary, at the root of the image.
	Entrypoint = "/weft"
	// UID and GID are the image's user and group, "weft".
	UID, GID = 65532, 65532
	// User is the config's User: UID:GID.
	User = "65532:65532"
	// Home is the user's home and the working directory: writable by it
	// (where a managed cluster's -data-dir would go, were one used).
	Home = "/home/weft"
	// Port is the port the server listens on (WEFT_ADDR), exposed.
	Port = 8123
	// DefaultSource is the org.opencontainers.image.source label.
	DefaultSource = "https://github.com/weftdev/weft"
	// DefaultCACerts is where the build host's CA bundle is read from.
	DefaultCACerts = "/etc/ssl/certs/ca-certificates.crt"
)

// Env is the environment the image sets. A container listens on every
// interface (WEFT_ADDR), so the server needs authentication: the image
// turns API keys on (WEFT_AUTH=keys; `weft keys create` makes them, and
// until one exists nothing but /ok, /livez and the UI's files answers
// without 401); JWT or WEFT_AUTH=none are one -e away. Logs are JSON, one
// object a line, for a log collector. No demo graphs: a deployment serves
// its own, through workers. DATABASE_URL is the one setting a container
// must be given (there is no PostgreSQL to manage inside it).
var Env = []string{
	"WEFT_ADDR=0.0.0.0:" + strconv.Itoa(Port),
	"WEFT_AUTH=keys",
	"WEFT_LOG_FORMAT=json",
	"WEFT_BUILTIN_GRAPHS=false",
	"HOME=" + Home,
	"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
}

// Healthcheck is Docker's health check of the config: `weft health`, a GET
// of /ok at WEFT_ADDR (the image has no shell and no curl).
var Healthcheck = v1.HealthConfig{
	Test:        []string{"CMD", Entrypoint, "health"},
	Interval:    10 * time.Second,
	Timeout:     3 * time.Second,
	StartPeriod: 10 * time.Second,
	Retries:     3,
}

// Options say what goes into the image.
type Options struct {
	// Binary is a statically linked Linux weft binary (CGO_ENABLED=0 go
	// build ./cmd/server); its ELF header gives the image's architecture.
	Binary string
	// Version is the org.opencontainers.image.version label (required).
	Version string
	// Revision, when set, is the org.opencontainers.image.revision label
	// (the source's commit).
	Revision string
	// Source is the org.opencontainers.image.source label (default
	// DefaultSource).
	Source string
	// CACerts is the CA bundle copied to /etc/ssl/certs/ca-certificates.crt
	// (default DefaultCACerts, the build host's): the server verifies TLS
	// (JWKS, webhooks, embeddings, PostgreSQL with sslmode=verify-full)
	// against it.
	CACerts string
	// Created is the time of the image and of its files (zero: the Unix
	// epoch, so that builds are reproducible).
	Created time.Time
}

// Build makes the image: empty, plus one layer, plus the config. It fails
// when the binary is not a static Linux executable (a dynamically linked
// one would not start in an image without a C library).
func Build(o Options) (v1.Image, error) {
	if o.Version == "" {
		return nil, errors.New("image: Version is required")
	}
	if o.Source == "" {
		o.Source = DefaultSource
	}
	if o.CACerts == "" {
		o.CACerts = DefaultCACerts
	}
	arch, err := staticArch(o.Binary)
	if err != nil {
		return nil, err
	}
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	certs, err := os.ReadFile(o.CACerts)
	if err != nil {
		return nil, fmt.Errorf("image: CA certificates: %w", err)
	}
	created := o.Created
	if created.IsZero() {
		created = time.Unix(0, 0)
	}
	created = created.UTC()
	layerTar, err := rootfs(bin, certs, created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.DefaultCompression),
		tarball.WithCompressedCaching) // compressed once, not for each digest and write

	if err != nil {
		return nil, fmt.Errorf("image: layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   v1.Time{Time: created},
			CreatedBy: "weft-image: /weft (static), /etc/passwd, /etc/group, CA certificates, /tmp, " + Home,
			Comment:   "built by github.com/weftdev/weft/deploy/image",
		},
	})
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = arch, "linux"
	cf.Created = v1.Time{Time: created}
	hc := Healthcheck
	cf.Config = v1.Config{
		Entrypoint:   []string{Entrypoint},
		User:         User,
		WorkingDir:   Home,
		Env:          append([]string(nil), Env...),
		ExposedPorts: map[string]struct{}{strconv.Itoa(Port) + "/tcp": {}},
		Healthcheck:  &hc,
		StopSignal:   "SIGTERM",
		Labels: map[string]string{
			"org.opencontainers.image.title":       "weft",
			"org.opencontainers.image.description": "Weft: LangGraph's Agent Server API on PostgreSQL",
			"org.opencontainers.image.version":     o.Version,
			"org.opencontainers.image.source":      o.Source,
			"org.opencontainers.image.url":         o.Source,
		},
	}
	if o.Revision != "" {
		cf.Config.Labels["org.opencontainers.image.revision"] = o.Revision
	}
	return mutate.ConfigFile(img, cf)
}

// staticArch checks that path is a statically linked Linux ELF executable
// and returns its GOARCH.
func staticArch(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("image: %s is not an ELF executable (build it with GOOS=linux): %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			return "", fmt.Errorf("image: %s is dynamically linked; the image has no C library: build it with CGO_ENABLED=0", path)
		}
	}
	switch f.Machine {
	case elf.EM_X86_64:
		return "amd64", nil
	case elf.EM_AARCH64:
		return "arm64", nil
	case elf.EM_386:
		return "386", nil
	case elf.EM_ARM:
		return "arm", nil
	case elf.EM_PPC64:
		return "ppc64le", nil
	case elf.EM_S390:
		return "s390x", nil
	case elf.EM_RISCV:
		return "riscv64", nil
	}
	return "", fmt.Errorf("image: %s: unknown machine %v", path, f.Machine)
}

// rootfs is the layer's tar: the directories, the user and group files,
// the CA bundle and the binary, owned by root but for the user's home and
// /tmp (sticky, world-writable).
func rootfs(bin, certs []byte, mtime time.Time) ([]byte, error) {
	passwd := "root:x:0:0:root:/root:/sbin/nologin\n" +
		fmt.Sprintf("weft:x:%d:%d:weft:%s:/sbin/nologin\n", UID, GID, Home)
	group := fmt.Sprintf("root:x:0:\nweft:x:%d:\n", GID)
	// Go's resolver reads it: files (/etc/hosts, which runtimes mount) before DNS.
	nsswitch := "hosts: files dns\n"
	type entry struct {
		name     string
		mode     int64
		uid, gid int
		data     []byte // nil: a directory
	}
	entries := []entry{
		{name: "etc/", mode: 0o755},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/nsswitch.conf", mode: 0o644, data: []byte(nsswitch)},
		{name: "etc/ssl/", mode: 0o755},
		{name: "etc/ssl/certs/", mode: 0o755},
		{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: certs},
		{name: "home/", mode: 0o755},
		{name: Home[1:] + "/", mode: 0o700, uid: UID, gid: GID},
		{name: "root/", mode: 0o700},
		{name: "tmp/", mode: 0o1777},
		{name: Entrypoint[1:], mode: 0o755, data: bin},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: mtime, Format: tar.FormatPAX}
		if e.data == nil {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if e.uid == 0 {
			h.Uname, h.Gname = "root", "root"
		} else {
			h.Uname, h.Gname = "weft", "weft"
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Sizes are the image's sizes: compressed (what a registry stores and a
// pull transfers: the layers as stored, the config and the manifest) and
// uncompressed (the layers unpacked).
func Sizes(img v1.Image) (compressed, uncompressed int64, err error) {
	m, err := img.RawManifest()
	if err != nil {
		return 0, 0, err
	}
	c, err := img.RawConfigFile()
	if err != nil {
		return 0, 0, err
	}
	compressed = int64(len(m) + len(c))
	layers, err := img.Layers()
	if err != nil {
		return 0, 0, err
	}
	for _, l := range layers {
		n, err := l.Size()
		if err != nil {
			return 0, 0, err
		}
		compressed += n
		rc, err := l.Uncompressed()
		if err != nil {
			return 0, 0, err
		}
		u, err := io.Copy(io.Discard, rc)
		rc.Close()
		if err != nil {
			return 0, 0, err
		}
		uncompressed += u
	}
	return compressed, uncompressed, nil
}

// WriteLayout writes img as the only image of an OCI image layout at dir,
// named ref (the org.opencontainers.image.ref.name annotation, e.g. the
// version: `skopeo copy oci:dir:ref docker://…`). An existing layout at
// dir is replaced; a directory that is not one is refused.
func WriteLayout(dir string, img v1.Image, ref string) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err != nil {
			return fmt.Errorf("image: %s exists and is not an OCI image layout: not replacing it", dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("image: %w", err)
	}
	var opts []layout.Option
	if ref != "" {
		opts = append(opts, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref}))
	}
	if err := p.AppendImage(img, opts...); err != nil {
		return fmt.Errorf("image: %w", err)
	}
	return nil
}

// WriteTarball writes img to path as a tarball `docker load` (and `podman
// load`) reads, tagged tag (e.g. weft:0.2.0).
func WriteTarball(path string, img v1.Image, tag string) error {
	t, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("image: tag %q: %w", tag, err)
	}
	if err := tarball.WriteToFile(path, t, img); err != nil {
		return fmt.Errorf("image: %w", err)
	}
	return nil
}
