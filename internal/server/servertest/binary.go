package servertest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary builds the server command (cmd/server) once per test binary and
// returns its path, for tests that run the server as its own process
// (crashes, signals, several processes on one database).
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "weft-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "weft")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/weftdev/weft/cmd/server").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// FreeAddr returns a loopback address with a port that was free a moment
// ago.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
