package cli_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/cli"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

// weft keys reads the database as the server does, LangGraph's DATABASE_URI
// included (a deployment of LangGraph's server may set only that).
func TestKeysReadDatabaseURI(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	// Without the alias the command would make a managed cluster of its own, here, and the key would not be in dsn.
	env := map[string]string{"DATABASE_URI": dsn, "WEFT_DATA_DIR": t.TempDir()}
	var stdout, stderr bytes.Buffer
	if code := cli.Run(nil, nil, []string{"keys", "create", "--scope", "worker", "--name", "aliased"}, func(k string) string { return env[k] },
		&stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "weft_") {
		t.Fatalf("keys create with DATABASE_URI: exit %d, %q %q", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	env = map[string]string{"DATABASE_URL": dsn}
	if code := cli.Run(nil, nil, []string{"keys", "list"}, func(k string) string { return env[k] }, &stdout, &stderr); code != 0 ||
		!strings.Contains(stdout.String(), "aliased") {
		t.Fatalf("keys list with DATABASE_URL: exit %d, %q", code, stdout.String())
	}
}
