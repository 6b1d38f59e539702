package postgres

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindBinariesNamesWhatToInstall(t *testing.T) {
	empty := t.TempDir()
	_, err := findBinaries(empty, filepath.Join(empty, "*", "bin"))
	if !errors.Is(err, ErrNoBinaries) || !strings.Contains(err.Error(), "apt-get install postgresql") {
		t.Fatalf("err = %v", err)
	}
	// A directory with the three server binaries is found through the glob,
	// the newest major first.
	for _, major := range []string{"9", "16"} {
		bin := filepath.Join(empty, major, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, b := range []string{"initdb", "pg_ctl", "postgres"} {
			if err := os.WriteFile(filepath.Join(bin, b), nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := findBinaries("", filepath.Join(empty, "*", "bin"))
	if err != nil || got != filepath.Join(empty, "16", "bin") {
		t.Fatalf("findBinaries = %q, %v", got, err)
	}
}
