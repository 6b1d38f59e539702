// Package deploy holds what ships Weft beyond one machine and the tests
// that check it: the server's OCI image, the compose file, the Helm chart
// (helm/weft) and the network-partition suite. It is a Go module of its own
// so that the libraries those tests need (Helm, Kubernetes' API types, the
// Compose specification, BuildKit's Dockerfile parser, go-containerregistry)
// stay out of the server's dependencies.
package deploy
