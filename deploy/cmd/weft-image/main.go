// Command weft-image builds the Weft server's OCI image from a static weft
// binary, without a container engine (package image): `make image` builds
// the binary and runs it.
//
//	CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w" -o dist/weft ./cmd/server
//	cd deploy && go run ./cmd/weft-image -binary ../dist/weft -version 0.2.0 \
//	    -oci ../dist/weft-oci -tar ../dist/weft-image.tar
//
// It writes an OCI image layout directory (-oci; `skopeo copy
// oci:dist/weft-oci:0.2.0 docker://registry.example.com/weft:0.2.0`, or
// `crane push`), a tarball for `docker load` / `podman load` (-tar), or
// both, and prints the image's digest and sizes.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/weftdev/weft/deploy/image"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("weft-image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	binary := fs.String("binary", "", "the static Linux weft binary (CGO_ENABLED=0 go build ./cmd/server) (required)")
	version := fs.String("version", "", "the image's version: the org.opencontainers.image.version label and the OCI layout's ref name (required)")
	revision := fs.String("revision", "", "the source commit: the org.opencontainers.image.revision label (optional)")
	source := fs.String("source", image.DefaultSource, "the org.opencontainers.image.source label")
	certs := fs.String("ca-certs", image.DefaultCACerts, "the CA bundle copied into the image")
	oci := fs.String("oci", "", "write an OCI image layout to this directory (replacing one there)")
	tarPath := fs.String("tar", "", "write a tarball docker load reads to this file")
	tag := fs.String("tag", "", "the tarball's tag (default weft:<version>)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *binary == "" || *version == "" || (*oci == "" && *tarPath == "") {
		fmt.Fprintln(stderr, "weft-image: give -binary, -version and at least one of -oci and -tar")
		fs.Usage()
		return 2
	}
	if *tag == "" {
		*tag = "weft:" + *version
	}
	img, err := image.Build(image.Options{Binary: *binary, Version: *version, Revision: *revision, Source: *source, CACerts: *certs})
	if err != nil {
		fmt.Fprintln(stderr, "weft-image:", err)
		return 1
	}
	if *oci != "" {
		if err := image.WriteLayout(*oci, img, *version); err != nil {
			fmt.Fprintln(stderr, "weft-image:", err)
			return 1
		}
		fmt.Fprintf(stdout, "OCI image layout: %s (ref %s)\n", *oci, *version)
	}
	if *tarPath != "" {
		if err := image.WriteTarball(*tarPath, img, *tag); err != nil {
			fmt.Fprintln(stderr, "weft-image:", err)
			return 1
		}
		fmt.Fprintf(stdout, "docker load tarball: %s (tag %s)\n", *tarPath, *tag)
	}
	digest, err := img.Digest()
	if err != nil {
		fmt.Fprintln(stderr, "weft-image:", err)
		return 1
	}
	compressed, uncompressed, err := image.Sizes(img)
	if err != nil {
		fmt.Fprintln(stderr, "weft-image:", err)
		return 1
	}
	cf, _ := img.ConfigFile()
	fmt.Fprintf(stdout, "image %s (%s/%s): %.1f MiB compressed, %.1f MiB uncompressed\n",
		digest, cf.OS, cf.Architecture, mib(compressed), mib(uncompressed))
	return 0
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
