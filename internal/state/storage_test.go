package state_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server/servertest"
)

type storageBody struct {
	ThreadID      string `json:"thread_id"`
	TotalBytes    int64  `json:"total_bytes"`
	Checkpoints   usage  `json:"checkpoints"`
	PendingWrites usage  `json:"pending_writes"`
	ChannelValues struct {
		Count     int64 `json:"count"`
		Bytes     int64 `json:"bytes"`
		ByChannel map[string]struct {
			Versions int64 `json:"versions"`
			Bytes    int64 `json:"bytes"`
		} `json:"by_channel"`
	} `json:"channel_values"`
}

type usage struct {
	Count int64 `json:"count"`
	Bytes int64 `json:"bytes"`
}

// GET /threads/{thread_id}/storage answers LangGraph's ThreadStorage from
// the rows as stored: the checkpoint rows (with the metadata kept once per
// thread), each channel's versions (a long list stored per element with
// its elements), the pending writes, and their total, the same numbers the
// tables give; a thread without checkpoints is all zeros; a thread that is
// not there, or another tenant's, is a 404, and an id that is no UUID a 422.
func TestThreadStorage(t *testing.T) {
	t.Parallel()
	s := servertest.StartWith(t, pgtest.DSN(t), servertest.TestTenants)
	get := func(tid string) storageBody {
		t.Helper()
		var b storageBody
		s.Must(http.StatusOK, "GET", "/threads/"+tid+"/storage", nil).JSON(t, &b)
		if b.ThreadID != tid {
			t.Fatalf("thread_id %q", b.ThreadID)
		}
		return b
	}

	empty := newThread(t, s, "")
	if b := get(empty); b.TotalBytes != 0 || b.Checkpoints != (usage{}) || b.PendingWrites != (usage{}) ||
		b.ChannelValues.Count != 0 || b.ChannelValues.ByChannel == nil || len(b.ChannelValues.ByChannel) != 0 {
		t.Errorf("a thread without checkpoints: %+v", b)
	}

	// A conversation whose messages list passes 1 KB: stored per element.
	tid := newThread(t, s, "")
	long := strings.Repeat("a long message ", 100)
	for range 2 {
		s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "echo_chat",
			"input": map[string]any{"messages": []any{map[string]any{"role": "human", "content": long}}}})
	}
	b := get(tid)
	var want struct{ cps, cpBytes, writes, writeBytes, msgVersions, msgBlobBytes, elementBytes, lists int64 }
	err := s.DB.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM checkpoints WHERE thread_id = $1),
		(SELECT coalesce(sum(pg_column_size(checkpoint) + pg_column_size(metadata)), 0) FROM checkpoints WHERE thread_id = $1)
		  + (SELECT coalesce(sum(pg_column_size(doc)), 0) FROM thread_checkpoint_metadata WHERE thread_id = $1),
		(SELECT count(*) FROM checkpoint_writes WHERE thread_id = $1),
		(SELECT coalesce(sum(pg_column_size(blob)), 0) FROM checkpoint_writes WHERE thread_id = $1),
		(SELECT count(*) FROM checkpoint_blobs WHERE thread_id = $1 AND channel = 'messages'),
		(SELECT coalesce(sum(pg_column_size(blob)), 0) FROM checkpoint_blobs WHERE thread_id = $1 AND channel = 'messages'),
		(SELECT coalesce(sum(pg_column_size(data)), 0) FROM thread_elements WHERE thread_id = $1),
		(SELECT count(*) FROM checkpoint_blobs WHERE thread_id = $1 AND type = 'weft_list')`, tid).Scan(
		&want.cps, &want.cpBytes, &want.writes, &want.writeBytes, &want.msgVersions, &want.msgBlobBytes, &want.elementBytes, &want.lists)
	if err != nil {
		t.Fatal(err)
	}
	if (want.lists == 0 || want.elementBytes == 0) && os.Getenv("WEFT_TEST_AES_KEY") == "" { // sealed lists are stored whole
		t.Fatalf("the messages were not stored per element (%d lists, %d element bytes): the test proves nothing", want.lists, want.elementBytes)
	}
	if b.Checkpoints != (usage{want.cps, want.cpBytes}) || want.cps < 2 {
		t.Errorf("checkpoints %+v, want %d rows of %d bytes", b.Checkpoints, want.cps, want.cpBytes)
	}
	if b.PendingWrites != (usage{want.writes, want.writeBytes}) {
		t.Errorf("pending writes %+v, want %d rows of %d bytes", b.PendingWrites, want.writes, want.writeBytes)
	}
	msgs := b.ChannelValues.ByChannel["messages"]
	if msgs.Versions != want.msgVersions || msgs.Bytes != want.msgBlobBytes+want.elementBytes {
		t.Errorf("messages %+v, want %d versions of %d bytes (blobs %d, elements %d)", msgs, want.msgVersions,
			want.msgBlobBytes+want.elementBytes, want.msgBlobBytes, want.elementBytes)
	}
	var count, bytes int64
	for _, c := range b.ChannelValues.ByChannel {
		count, bytes = count+c.Versions, bytes+c.Bytes
	}
	if b.ChannelValues.Count != count || b.ChannelValues.Bytes != bytes || b.ChannelValues.Count < 2 {
		t.Errorf("channel values %d versions of %d bytes, by channel %d of %d", b.ChannelValues.Count, b.ChannelValues.Bytes, count, bytes)
	}
	if b.TotalBytes != b.Checkpoints.Bytes+b.ChannelValues.Bytes+b.PendingWrites.Bytes {
		t.Errorf("total %d is not the sum of the sections", b.TotalBytes)
	}

	// Another tenant's thread, an unknown one, and no UUID.
	req, _ := http.NewRequest("GET", s.URL+"/threads/"+tid+"/storage", nil)
	req.Header.Set(servertest.TenantHeader, "other")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("another tenant's thread: %d, want 404", res.StatusCode)
	}
	s.Must(http.StatusNotFound, "GET", "/threads/00000000-0000-0000-0000-000000000000/storage", nil)
	s.Must(http.StatusUnprocessableEntity, "GET", "/threads/nope/storage", nil)
}
