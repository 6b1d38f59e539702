package server_test

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/reencrypt"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

const (
	testKeyA = "0123456789abcdef"                 // AES-128
	testKeyB = "fedcba9876543210fedcba9876543210" // AES-256
)

func keyring(t *testing.T, current string, old ...string) *crypt.Keyring {
	t.Helper()
	kr, err := crypt.ParseKeyring(current, strings.Join(old, ","))
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

func startWithKeys(t *testing.T, dsn string, kr *crypt.Keyring) *servertest.Server {
	t.Helper()
	return servertest.StartWith(t, dsn, func(c *server.Config) { c.Keyring = kr })
}

// writeContent makes a thread with an echo_chat run, a hitl run that was
// interrupted and resumed, and a store item, every one carrying marker in
// its content (never in metadata), and checks that the API shows it back
// in plain text. It returns the thread ids.
func writeContent(t *testing.T, s *servertest.Server, marker string) (chat, hitl string) {
	t.Helper()
	chat = s.Must(http.StatusOK, "POST", "/threads", map[string]any{"metadata": map[string]any{"kind": "chat"}}).Map(t)["thread_id"].(string)
	res := s.Must(http.StatusOK, "POST", "/threads/"+chat+"/runs/wait", map[string]any{"assistant_id": "echo_chat",
		"input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": marker}}}, "stream_mode": []string{"values", "messages-tuple", "updates"}})
	if !strings.Contains(string(res.Body), "echo: "+marker) {
		t.Fatalf("chat result = %s", res.Body)
	}
	hitl = s.Must(http.StatusOK, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
	s.Must(http.StatusOK, "POST", "/threads/"+hitl+"/runs/wait", map[string]any{"assistant_id": "hitl", "input": map[string]any{"input": marker}})
	th := s.Must(http.StatusOK, "GET", "/threads/"+hitl, nil)
	if th.Map(t)["status"] != "interrupted" || !strings.Contains(string(th.Body), marker) {
		t.Fatalf("interrupted thread = %s", th.Body)
	}
	res = s.Must(http.StatusOK, "POST", "/threads/"+hitl+"/runs/wait", map[string]any{"assistant_id": "hitl",
		"command": map[string]any{"resume": "ok " + marker}})
	if got := res.Map(t)["result"]; got != marker+":ok "+marker {
		t.Fatalf("resumed result = %v (%s)", got, res.Body)
	}
	s.Must(http.StatusNoContent, "PUT", "/store/items", map[string]any{"namespace": []string{"notes"}, "key": storeKey(marker),
		"value": map[string]any{"note": marker}})
	return chat, hitl
}

// readContent checks that every kind of encrypted content reads back in
// plain text through the API.
func readContent(t *testing.T, s *servertest.Server, chat, hitl, marker string) {
	t.Helper()
	for _, path := range []string{"/threads/" + chat, "/threads/" + chat + "/state", "/threads/" + hitl + "/state",
		"/threads/" + hitl + "/history", "/store/items?namespace=notes&key=" + storeKey(marker)} {
		if r := s.Must(http.StatusOK, "GET", path, nil); !strings.Contains(string(r.Body), marker) {
			t.Errorf("GET %s: no marker in %s", path, r.Body)
		}
	}
	runs := s.Must(http.StatusOK, "GET", "/threads/"+chat+"/runs", nil)
	if !strings.Contains(string(runs.Body), marker) { // kwargs.input
		t.Errorf("runs: no marker in %s", runs.Body)
	}
	var list []map[string]any
	runs.JSON(t, &list)
	rid := list[0]["run_id"].(string)
	req, _ := http.NewRequest("GET", s.URL+"/threads/"+chat+"/runs/"+rid+"/stream", nil)
	req.Header.Set("Last-Event-ID", "-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	found := false
	for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
		if strings.Contains(sc.Text(), "echo: "+marker) {
			found = true
		}
	}
	if !found {
		t.Error("joined stream: no event carries the marker")
	}
}

// pgDump dumps the database at dsn (data and schema) with the installed
// PostgreSQL's pg_dump.
func pgDump(t *testing.T, dsn string) string {
	t.Helper()
	dir, err := postgres.FindBinaries()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(dir, "pg_dump"), "--dbname="+dsn, "--no-owner").Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("pg_dump: %v %s", err, msg)
	}
	return string(out)
}

// TestEncryptionAtRest: with LANGGRAPH_AES_KEY, content reads back plain
// through the API, searches by values are refused, and a dump of the
// database holds the marker nowhere.
func TestEncryptionAtRest(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	s := startWithKeys(t, dsn, keyring(t, testKeyA))
	marker := "weft-secret-" + strings.ReplaceAll(uuid.NewString(), "-", "")
	chat, hitl := writeContent(t, s, marker)
	readContent(t, s, chat, hitl, marker)

	for _, c := range []struct {
		path string
		body map[string]any
	}{
		{"/threads/search", map[string]any{"values": map[string]any{"input": marker}}},
		{"/threads/count", map[string]any{"values": map[string]any{"input": marker}}},
		{"/store/items/search", map[string]any{"filter": map[string]any{"note": marker}}},
		{"/store/items/search", map[string]any{"query": marker}},
	} {
		r := s.Must(http.StatusUnprocessableEntity, "POST", c.path, c.body)
		if !strings.Contains(r.Detail(t), "encrypted") {
			t.Errorf("%s: detail %q", c.path, r.Detail(t))
		}
	}
	// Metadata stays searchable, and the threads it finds show their values.
	r := s.Must(http.StatusOK, "POST", "/threads/search", map[string]any{"metadata": map[string]any{"kind": "chat"}})
	var found []map[string]any
	r.JSON(t, &found)
	if len(found) != 1 || found[0]["thread_id"] != chat || !strings.Contains(string(r.Body), "echo: "+marker) {
		t.Fatalf("metadata search = %s", r.Body)
	}
	if r := s.Must(http.StatusOK, "POST", "/store/items/search", map[string]any{"namespace_prefix": []string{"notes"}}); !strings.Contains(string(r.Body), marker) {
		t.Fatalf("store search by prefix = %s", r.Body)
	}

	dump := pgDump(t, dsn)
	if strings.Contains(dump, marker) {
		i := strings.Index(dump, marker)
		t.Fatalf("the dump holds the plaintext marker: …%s…", dump[max(0, i-300):min(len(dump), i+100)])
	}
	for _, sealed := range []string{"json+aes", crypt.EnvelopeKey} {
		if !strings.Contains(dump, sealed) {
			t.Errorf("the dump has no %q: nothing was sealed?", sealed)
		}
	}
	// The same steps without a key leave the marker in the dump: the check
	// above can fail.
	plainDSN := pgtest.DSN(t)
	writeContent(t, startWithKeys(t, plainDSN, nil), marker)
	if !strings.Contains(pgDump(t, plainDSN), marker) {
		t.Fatal("a dump without encryption has no marker: the dump check proves nothing")
	}
}

// TestEncryptionRotation: rows written without a key and under an old key
// read after a rotation; weft reencrypt moves everything to the new key,
// after which the old key is not needed, and a second run finds nothing.
func TestEncryptionRotation(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	marker := "weft-rotate-" + strings.ReplaceAll(uuid.NewString(), "-", "")
	s0 := startWithKeys(t, dsn, nil)
	plainChat, plainHitl := writeContent(t, s0, marker+"p")
	// A chat long enough to be stored compact (its messages once each in
	// the element log) while encryption was off.
	longChat := s0.Must(http.StatusOK, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
	for i := range 6 {
		s0.Must(http.StatusOK, "POST", "/threads/"+longChat+"/runs/wait", map[string]any{"assistant_id": "echo_chat",
			"input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": fmt.Sprintf("%s long %d %s", marker, i, strings.Repeat("x", 200))}}}})
	}
	if n := dbInt(t, s0, `SELECT count(*) FROM checkpoint_blobs WHERE thread_id = $1 AND type = 'weft_list'`, longChat); n == 0 {
		t.Fatal("the long chat has no compact list")
	}
	longState := string(s0.Must(http.StatusOK, "GET", "/threads/"+longChat+"/state", nil).Body)
	if err := s0.Srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	sA := startWithKeys(t, dsn, keyring(t, testKeyA))
	readContent(t, sA, plainChat, plainHitl, marker+"p") // plaintext rows read with encryption on
	chatA, hitlA := writeContent(t, sA, marker+"a")
	if err := sA.Srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	rotated := keyring(t, testKeyB, testKeyA)
	sB := startWithKeys(t, dsn, rotated)
	readContent(t, sB, chatA, hitlA, marker+"a") // old-key rows read during the rotation

	counts, err := reencrypt.Run(context.Background(), sB.DB, rotated, 7, nil) // a small batch: several pages
	if err != nil {
		t.Fatal(err)
	}
	byTable := map[string]reencrypt.Count{}
	for _, c := range counts {
		byTable[c.Table] = c
	}
	for _, table := range []string{"checkpoint_blobs", "checkpoint_writes", "runs", "run_events", "threads", "store_items"} {
		if c := byTable[table]; c.Rewritten == 0 || c.Scanned < c.Rewritten {
			t.Errorf("%s: %+v, want rows rewritten", table, c)
		}
	}
	again, err := reencrypt.Run(context.Background(), sB.DB, rotated, 500, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range again {
		if c.Rewritten != 0 || c.Skipped != 0 {
			t.Errorf("second run rewrote %+v", c)
		}
	}
	if err := sB.Srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	// The new key alone reads everything, the old one nothing.
	sNew := startWithKeys(t, dsn, keyring(t, testKeyB))
	readContent(t, sNew, chatA, hitlA, marker+"a")
	readContent(t, sNew, plainChat, plainHitl, marker+"p")
	// The compact chat: its lists stored whole and sealed, its element log
	// gone, its state as it was.
	if got := string(sNew.Must(http.StatusOK, "GET", "/threads/"+longChat+"/state", nil).Body); got != longState {
		t.Errorf("the long chat's state after reencrypt:\n%.300s\nwant\n%.300s", got, longState)
	}
	if n := dbInt(t, sNew, `SELECT count(*) FROM checkpoint_blobs WHERE thread_id = $1 AND type NOT LIKE '%+aes'`, longChat); n != 0 {
		t.Errorf("%d blobs of the long chat left unsealed", n)
	}
	if n := dbInt(t, sNew, `SELECT count(*) FROM thread_elements WHERE thread_id = $1`, longChat); n != 0 {
		t.Errorf("%d elements of the long chat left in plain text", n)
	}
	var typ string
	var blob []byte
	if err := sNew.DB.QueryRow(context.Background(), `SELECT type, blob FROM checkpoint_blobs
		WHERE thread_id = $1 AND blob IS NOT NULL LIMIT 1`, plainChat).Scan(&typ, &blob); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(typ, "+aes") {
		t.Fatalf("a blob written without a key is %q after reencrypt", typ)
	}
	if _, _, err := keyring(t, testKeyA).Open(typ, blob); err == nil {
		t.Fatal("the old key still opens a rewritten blob")
	}
	if _, _, err := keyring(t, testKeyB).Open(typ, blob); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(pgDump(t, dsn), marker) {
		t.Fatal("plaintext left in the database after reencrypt")
	}
}

// TestEncryptionLangGraphRows reads checkpoint rows sealed in LangGraph's
// EncryptedSerializer format by an independent EAX (package crypt's
// testdata, made with Python's cryptography package): a JSON blob and a
// Python msgpack blob, through the store and through the worker API, which
// hands them to workers decrypted.
func TestEncryptionLangGraphRows(t *testing.T) {
	t.Parallel()
	fixture, err := os.ReadFile("../crypt/testdata/langgraph_blobs.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(fixture)), "\n")
	jsonRow, msgpackRow := strings.Fields(lines[0]), strings.Fields(lines[1])
	dsn := pgtest.DSN(t)
	kr := keyring(t, jsonRow[0], msgpackRow[0]) // the msgpack row is under a second key
	s := startWithKeys(t, dsn, kr)
	ctx := crypt.WithKeyring(context.Background(), kr)

	tid := uuid.NewString()
	cfg := checkpoints.Config{ThreadID: tid}
	cp := checkpoints.Checkpoint{ID: checkpoints.NewCheckpointID(0), ChannelValues: map[string]any{"doc": "x", "py": "y"},
		ChannelVersions: map[string]string{"doc": "1", "py": "1"}}
	if _, err := checkpoints.Put(ctx, s.DB, cfg, cp, checkpoints.Metadata{}, map[string]string{"doc": "1", "py": "1"}); err != nil {
		t.Fatal(err)
	}
	for ch, row := range map[string][]string{"doc": jsonRow, "py": msgpackRow} {
		blob, _ := hex.DecodeString(row[3])
		if _, err := s.DB.Exec(ctx, `UPDATE checkpoint_blobs SET type = $3, blob = $4 WHERE thread_id = $1 AND channel = $2`,
			tid, ch, row[1], blob); err != nil {
			t.Fatal(err)
		}
	}
	got, err := checkpoints.GetTuple(ctx, s.DB, cfg)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := checkpoints.Materialize(got.Checkpoint.ChannelValues["doc"])
	if err != nil {
		t.Fatal(err)
	}
	msgs, _ := doc.(map[string]any)["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["content"] != "hello from langgraph" {
		t.Fatalf("doc = %v", doc)
	}
	if py := got.Checkpoint.ChannelValues["py"]; py.(map[string]any)["marker"] != "plain-in-msgpack" {
		t.Fatalf("py = %v", py)
	}
	// Without the key the rows do not read.
	if _, err := checkpoints.GetTuple(context.Background(), s.DB, cfg); err == nil {
		t.Fatal("encrypted rows read without a keyring")
	}
	// The worker API sends them decrypted, with their plain types.
	raw := s.Must(http.StatusOK, "POST", "/dispatch/checkpoints/get", map[string]any{"thread_id": tid}).Map(t)
	types := map[string]string{}
	for _, e := range raw["channel_values"].([]any) {
		e := e.([]any)
		types[e[0].(string)] = e[1].(string)
	}
	if types["doc"] != "json" || types["py"] != "msgpack" {
		t.Fatalf("worker raw read types = %v", types)
	}
}

// storeKey is the store key of a marker's item: keys (like namespaces) are
// stored plain, so it must not contain the marker.
func storeKey(marker string) string { return "k" + marker[len(marker)-6:] }

// dbInt is the integer the query returns.
func dbInt(t *testing.T, s *servertest.Server, q string, args ...any) int {
	t.Helper()
	var n int
	if err := s.DB.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
