package main_test

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The real binary: starts on a managed cluster, serves, and on SIGTERM
// drains, stops PostgreSQL and exits 0.
func TestBinaryStartsServesAndStopsOnSIGTERM(t *testing.T) {
	dir, err := os.MkdirTemp("", "weft-bin-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// Let the PostgreSQL user reach the data dir inside (the server would
	// otherwise place the cluster under /var/lib/weft, outside this test).
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "weft")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	var logs bytes.Buffer
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "WEFT_ADDR="+addr, "WEFT_DATA_DIR="+filepath.Join(dir, "data"), "DATABASE_URL=", "WEFT_LOG_FORMAT=json")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	}()

	url := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(url + "/ok?check_db=1")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("server exited early: %v\n%s", err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not ready\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	resp, err := http.Post(url+"/threads", "application/json", nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("create: %v %v", resp, err)
	}
	resp.Body.Close()

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, logs.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("no exit after SIGTERM\n%s", logs.String())
	}
	out := logs.String()
	for _, want := range []string{`"msg":"request"`, `"path":"/threads"`, `"status":200`, "local PostgreSQL stopped", `"msg":"stopped"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "pgdata", "postmaster.pid")); err == nil {
		t.Errorf("PostgreSQL still running after exit")
	}
}
