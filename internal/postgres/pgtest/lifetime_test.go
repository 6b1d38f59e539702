package pgtest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/postgres"
)

// helperEnv makes the test binary a helper of TestClusterEndsWithItsProcess:
// it starts a cluster of its own, reports it on stdout, then ends as the
// variable's value says.
const helperEnv = "WEFT_PGTEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(Main(m))
	case "timeout":
		// The cluster is started before m.Run, which starts the
		// -test.timeout alarm, so that a short timeout fires in the test
		// however long the cluster took to start.
		once.Do(setup)
		if setupErr != nil {
			fmt.Println("pgtest-helper error:", setupErr)
			os.Exit(3)
		}
		report()
		os.Exit(m.Run())
	case "nomain":
		// A package whose tests use pgtest without a TestMain calling Main.
		os.Exit(m.Run())
	default:
		os.Exit(Main(m))
	}
}

// report prints the helper's cluster for the parent test.
func report() {
	fmt.Printf("pgtest-helper dir=%s postmaster=%d watchdog=%d\n",
		cluster.TempDir(), cluster.PostmasterPID(), cluster.WatchdogPID())
}

// TestHelper is the helper's test (skipped in a normal run).
func TestHelper(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("run by TestClusterEndsWithItsProcess")
	}
	_ = DSN(t)
	if mode != "timeout" {
		report()
	}
	switch mode {
	case "panic":
		panic("pgtest helper: a test panics")
	case "fail":
		t.Fatal("pgtest helper: a test fails")
	case "timeout", "kill":
		time.Sleep(time.Minute) // until -test.timeout, or SIGKILL from the parent
	}
}

// A cluster started by a test binary stops, and its directory goes, when
// the binary ends in any way: a panic, go test's -timeout, SIGKILL, a
// failed test, and a binary whose TestMain does not call Main.
func TestClusterEndsWithItsProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts several clusters")
	}
	if _, err := postgres.FindBinaries(); err != nil {
		t.Skip(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode    string
		args    []string
		killed  bool // the parent kills the helper once it has reported
		wantOut string
	}{
		{mode: "panic", wantOut: "pgtest helper: a test panics"},
		{mode: "timeout", args: []string{"-test.timeout=1s"}, wantOut: "test timed out after 1s"},
		{mode: "kill", killed: true},
		{mode: "fail", wantOut: "pgtest helper: a test fails"},
		{mode: "nomain"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, exe, append([]string{"-test.run=^TestHelper$", "-test.v"}, tc.args...)...)
			cmd.Env = append(withoutEnv(os.Environ(), "WEFT_TEST_DATABASE_URL"), helperEnv+"="+tc.mode)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var dir string
			var postmaster, watchdog int
			var out strings.Builder
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				line := sc.Text()
				out.WriteString(line + "\n")
				if rest, ok := strings.CutPrefix(line, "pgtest-helper dir="); ok && dir == "" {
					if _, err := fmt.Sscanf(strings.ReplaceAll(rest, " ", "\n"), "%s\npostmaster=%d\nwatchdog=%d", &dir, &postmaster, &watchdog); err != nil {
						t.Errorf("bad report %q: %v", line, err)
					}
					if tc.killed {
						_ = cmd.Process.Signal(syscall.SIGKILL)
					}
				}
			}
			err = cmd.Wait()
			if tc.mode == "nomain" {
				if err != nil {
					t.Fatalf("helper: %v\n%s%s", err, &out, &stderr)
				}
			} else if err == nil {
				t.Fatalf("helper exited 0; want a failure\n%s%s", &out, &stderr)
			}
			if dir == "" || postmaster == 0 || watchdog == 0 {
				t.Fatalf("the helper did not report a running cluster\n%s%s", &out, &stderr)
			}
			if tc.wantOut != "" && !strings.Contains(out.String()+stderr.String(), tc.wantOut) {
				t.Errorf("helper output lacks %q:\n%s%s", tc.wantOut, &out, &stderr)
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				_, statErr := os.Stat(dir)
				pmAlive, wdAlive := postgres.ProcessAlive(postmaster), postgres.ProcessAlive(watchdog)
				if !pmAlive && !wdAlive && os.IsNotExist(statErr) {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("30s after the helper ended: postmaster %d alive %v, watchdog %d alive %v, %s stat: %v",
						postmaster, pmAlive, watchdog, wdAlive, dir, statErr)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}

func withoutEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
