package inspect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/postgres"
)

// CheckpointNode is one checkpoint of the tree, without values.
type CheckpointNode struct {
	CheckpointID       string  `db:"checkpoint_id" json:"checkpoint_id" validate:"required"`
	ParentCheckpointID *string `db:"parent_checkpoint_id" json:"parent_checkpoint_id" validate:"required" extensions:"x-nullable"`
	CheckpointNS       string  `db:"checkpoint_ns" json:"checkpoint_ns" validate:"required"`
	// CreatedAt is the checkpoint's own timestamp (checkpoint.ts), as the
	// saver wrote it.
	CreatedAt string `db:"created_at" json:"created_at" validate:"required"`
	// Step is metadata.step (-1 for an input checkpoint); null when absent.
	Step *int `db:"step" json:"step" validate:"required" extensions:"x-nullable"`
	// Source is metadata.source: input, loop, update or fork ("" when absent).
	Source string `db:"source" json:"source" validate:"required"`
	// RunID is metadata.run_id: the run that wrote the checkpoint (null for
	// update_state and rows written outside a run).
	RunID *string `db:"run_id" json:"run_id" validate:"required" extensions:"x-nullable"`
	// Updated lists the channels whose version differs from the parent's
	// (all of them for a first checkpoint), sorted.
	Updated []string `db:"updated" json:"updated" validate:"required"`
	// Writes counts the pending writes recorded under the checkpoint (by the
	// tasks that started from it); Tasks the distinct tasks among them.
	Writes int `db:"writes" json:"writes" validate:"required"`
	Tasks  int `db:"tasks" json:"tasks" validate:"required"`
	// Errors, Interrupts and Resumes count the writes to __error__,
	// __interrupt__ and __resume__.
	Errors     int `db:"errors" json:"errors" validate:"required"`
	Interrupts int `db:"interrupts" json:"interrupts" validate:"required"`
	Resumes    int `db:"resumes" json:"resumes" validate:"required"`
}

// CheckpointPage is a page of a thread's checkpoint tree.
type CheckpointPage struct {
	ThreadID     string `json:"thread_id" validate:"required" format:"uuid"`
	CheckpointNS string `json:"checkpoint_ns" validate:"required"`
	// Head is the thread's latest checkpoint in the namespace (the greatest
	// id on any branch: what GET /threads/{id}/state reads); null without
	// checkpoints.
	Head *string `json:"head" validate:"required" extensions:"x-nullable"`
	// Total counts the checkpoints of the namespace (every page).
	Total int64 `json:"total" validate:"required"`
	// Namespaces lists the thread's checkpoint namespaces ("" is the root
	// graph), at most 100.
	Namespaces  []string         `json:"namespaces" validate:"required"`
	Checkpoints []CheckpointNode `json:"checkpoints" validate:"required"`
	// Next is the before cursor of the next (older) page; null on the last.
	Next *string `json:"next" validate:"required" extensions:"x-nullable"`
}

// checkpointNodeListSQL reads a page of nodes: a backward walk of the
// primary key (the %s is the optional keyset bound), each row joined with
// its parent's channel_versions (one primary-key probe) and the counts of
// its writes (one primary-key range).
const checkpointNodeListSQL = `
SELECT c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint_ns,
       coalesce(c.checkpoint->>'ts', '') AS created_at,
       CASE WHEN jsonb_typeof(c.metadata->'step') = 'number' THEN (c.metadata->>'step')::numeric::int END AS step,
       coalesce(c.metadata->>'source', '') AS source,
       c.metadata->>'run_id' AS run_id,
       coalesce(u.updated, '{}') AS updated,
       coalesce(w.writes, 0)::int AS writes, coalesce(w.tasks, 0)::int AS tasks,
       coalesce(w.errors, 0)::int AS errors, coalesce(w.interrupts, 0)::int AS interrupts,
       coalesce(w.resumes, 0)::int AS resumes
FROM checkpoints c
LEFT JOIN LATERAL (
    SELECT p.checkpoint->'channel_versions' AS cv FROM checkpoints p
    WHERE p.thread_id = c.thread_id AND p.checkpoint_ns = c.checkpoint_ns AND p.checkpoint_id = c.parent_checkpoint_id
) p ON true
LEFT JOIN LATERAL (
    SELECT array_agg(k.key ORDER BY k.key) AS updated
    FROM jsonb_each_text(coalesce(c.checkpoint->'channel_versions', '{}')) k
    WHERE p.cv IS NULL OR (p.cv->>k.key) IS DISTINCT FROM k.value
) u ON true
LEFT JOIN LATERAL (
    SELECT count(*) AS writes, count(DISTINCT task_id) AS tasks,
           count(*) FILTER (WHERE channel = '__error__') AS errors,
           count(*) FILTER (WHERE channel = '__interrupt__') AS interrupts,
           count(*) FILTER (WHERE channel = '__resume__') AS resumes
    FROM checkpoint_writes w
    WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id
) w ON true
WHERE c.thread_id = $1 AND c.checkpoint_ns = $2%s
ORDER BY c.checkpoint_id DESC
LIMIT $3`

// checkpointNamespaceListSQL lists a thread's distinct namespaces with one
// index probe each (a loose index scan), at most 100.
const checkpointNamespaceListSQL = `
WITH RECURSIVE ns(n) AS (
    SELECT min(checkpoint_ns) FROM checkpoints WHERE thread_id = $1
    UNION ALL
    SELECT (SELECT min(checkpoint_ns) FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns > ns.n)
    FROM ns WHERE ns.n IS NOT NULL
)
SELECT n FROM ns WHERE n IS NOT NULL LIMIT 100`

// CheckpointNodeList reads a page of the thread's checkpoint tree in
// namespace ns: newest first, up to limit nodes older than before ("" = from
// the head). The page's nodes cost O(limit) index probes; Total counts the
// namespace's rows (an index-only scan of the thread's checkpoints).
func CheckpointNodeList(ctx context.Context, db postgres.DBTX, threadID, ns, before string, limit int) (*CheckpointPage, error) {
	bound, args := "", []any{threadID, ns, limit + 1}
	if before != "" {
		bound, args = " AND c.checkpoint_id < $4", append(args, before)
	}
	rows, err := db.Query(ctx, fmt.Sprintf(checkpointNodeListSQL, bound), args...)
	if err != nil {
		return nil, fmt.Errorf("checkpoint nodes: %w", err)
	}
	nodes, err := pgx.CollectRows(rows, pgx.RowToStructByName[CheckpointNode])
	if err != nil {
		return nil, fmt.Errorf("checkpoint nodes: %w", err)
	}
	page := &CheckpointPage{ThreadID: threadID, CheckpointNS: ns, Checkpoints: nodes}
	if len(nodes) > limit {
		page.Checkpoints = nodes[:limit]
		next := nodes[limit-1].CheckpointID
		page.Next = &next
	}
	if err := db.QueryRow(ctx, `SELECT count(*), max(checkpoint_id) FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2`,
		threadID, ns).Scan(&page.Total, &page.Head); err != nil {
		return nil, fmt.Errorf("checkpoint count: %w", err)
	}
	rows, err = db.Query(ctx, checkpointNamespaceListSQL, threadID)
	if err != nil {
		return nil, fmt.Errorf("checkpoint namespaces: %w", err)
	}
	if page.Namespaces, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return nil, fmt.Errorf("checkpoint namespaces: %w", err)
	}
	return page, nil
}

// BlobInfo describes the stored value of one channel version.
type BlobInfo struct {
	Channel string `json:"channel" validate:"required"`
	Version string `json:"version" validate:"required"`
	// Type is the serializer type (json, bytes, msgpack, weft_list),
	// "inline" for a value the Python saver stored in the checkpoint row
	// itself, or "empty" when the version has no value: a stock saver's
	// "empty" row, or no row at all (Weft writes none for a consumed
	// channel; LangGraph's delta channels none between snapshots).
	Type  string `json:"type" validate:"required"`
	Bytes int    `json:"bytes" validate:"required"`
}

// WriteInfo is one pending write, decoded.
type WriteInfo struct {
	TaskID   string `json:"task_id" validate:"required"`
	TaskPath string `json:"task_path" validate:"required"`
	Idx      int    `json:"idx" validate:"required"`
	Channel  string `json:"channel" validate:"required"`
	Type     string `json:"type" validate:"required"`
	Bytes    int    `json:"bytes" validate:"required"`
	// Value is the decoded value (LangChain messages in their dict form,
	// as the state API shows them); null for an empty write.
	Value any `json:"value" validate:"required" swaggertype:"object" extensions:"x-nullable"`
}

// VersionChange is a channel whose version differs between a checkpoint and
// its parent.
type VersionChange struct {
	Channel string  `json:"channel" validate:"required"`
	From    *string `json:"from" validate:"required" extensions:"x-nullable"`
	To      *string `json:"to" validate:"required" extensions:"x-nullable"`
}

// CheckpointDetail is one checkpoint as stored.
type CheckpointDetail struct {
	ThreadID           string          `json:"thread_id" validate:"required" format:"uuid"`
	CheckpointID       string          `json:"checkpoint_id" validate:"required"`
	ParentCheckpointID *string         `json:"parent_checkpoint_id" validate:"required" extensions:"x-nullable"`
	CheckpointNS       string          `json:"checkpoint_ns" validate:"required"`
	V                  int             `json:"v" validate:"required"`
	CreatedAt          string          `json:"created_at" validate:"required"`
	Metadata           json.RawMessage `json:"metadata" validate:"required" swaggertype:"object"`
	// ChannelVersions, VersionsSeen and UpdatedChannels are the checkpoint's
	// own fields (updated_channels only where the writer records it).
	ChannelVersions map[string]string            `json:"channel_versions" validate:"required"`
	VersionsSeen    map[string]map[string]string `json:"versions_seen" validate:"required"`
	UpdatedChannels []string                     `json:"updated_channels" validate:"required"`
	// ParentChannelVersions are the parent's channel_versions (null for a
	// first checkpoint); Changes the channels whose version differs.
	ParentChannelVersions map[string]string `json:"parent_channel_versions" validate:"required" extensions:"x-nullable"`
	Changes               []VersionChange   `json:"changes" validate:"required"`
	Blobs                 []BlobInfo        `json:"blobs" validate:"required"`
	Writes                []WriteInfo       `json:"writes" validate:"required"`
	// Children are the checkpoints whose parent this is (forks when more
	// than one), oldest first, at most 100.
	Children []string `json:"children" validate:"required"`
}

type checkpointRow struct {
	ParentID       *string `db:"parent_checkpoint_id"`
	Checkpoint     []byte  `db:"checkpoint"`
	Metadata       []byte  `db:"metadata"`
	ParentVersions []byte  `db:"parent_versions"`
}

type writeRow struct {
	TaskID   string `db:"task_id"`
	TaskPath string `db:"task_path"`
	Idx      int    `db:"idx"`
	Channel  string `db:"channel"`
	Type     string `db:"type"`
	Blob     []byte `db:"blob"`
	Bytes    int    `db:"bytes"`
}

type blobMeta struct {
	Channel string `db:"channel"`
	Version string `db:"version"`
	Type    string `db:"type"`
	Bytes   int    `db:"bytes"`
}

// checkpointDetailRowSQL reads a checkpoint row with its parent's
// channel_versions (two primary-key probes).
const checkpointDetailRowSQL = `
SELECT c.parent_checkpoint_id, c.checkpoint, weft_checkpoint_metadata(c.thread_id, c.metadata) AS metadata,
    p.checkpoint->'channel_versions' AS parent_versions
FROM checkpoints c
LEFT JOIN checkpoints p ON p.thread_id = c.thread_id AND p.checkpoint_ns = c.checkpoint_ns AND p.checkpoint_id = c.parent_checkpoint_id
WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = $3`

// CheckpointDetailGet reads checkpoint id of the thread in namespace ns
// with its raw versions, its blobs' sizes and its pending writes decoded
// (as checkpoints.TupleFromStored decodes them for every saver's rows). A
// missing checkpoint is apperr.NotFound. It reads the checkpoint's row, its
// parent's, its writes and its blob keys (never the blobs themselves), plus
// a scan of the namespace's checkpoints of the thread for Children.
func CheckpointDetailGet(ctx context.Context, db postgres.DBTX, threadID, ns, id string) (*CheckpointDetail, error) {
	rows, err := db.Query(ctx, checkpointDetailRowSQL, threadID, ns, id)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[checkpointRow])
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, apperr.Errorf(apperr.NotFound, "Checkpoint %s not found in thread %s", id, threadID)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	rows, err = db.Query(ctx, `SELECT task_id, task_path, idx, channel, coalesce(type, '') AS type, blob, pg_column_size(blob) AS bytes
		FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3
		ORDER BY task_path, task_id, idx`, threadID, ns, id)
	if err != nil {
		return nil, fmt.Errorf("checkpoint writes: %w", err)
	}
	writes, err := pgx.CollectRows(rows, pgx.RowToStructByName[writeRow])
	if err != nil {
		return nil, fmt.Errorf("checkpoint writes: %w", err)
	}
	stored := make([]checkpoints.StoredWrite, len(writes))
	for i, w := range writes {
		v, err := checkpoints.OpenStored(ctx, checkpoints.StoredValue{Type: w.Type, Data: w.Blob})
		if err != nil {
			return nil, fmt.Errorf("checkpoint write %s/%d: %w", w.TaskID, w.Idx, err)
		}
		stored[i] = checkpoints.StoredWrite{TaskID: w.TaskID, Channel: w.Channel, Value: v}
	}
	cfg := checkpoints.Config{ThreadID: threadID, NS: ns, CheckpointID: id}
	t, err := checkpoints.TupleFromStored(cfg, row.ParentID, row.Checkpoint, row.Metadata, nil, stored)
	if err != nil {
		return nil, err
	}
	d := &CheckpointDetail{ThreadID: threadID, CheckpointID: id, ParentCheckpointID: row.ParentID, CheckpointNS: ns,
		V: t.Checkpoint.V, CreatedAt: t.Checkpoint.TS, Metadata: row.Metadata,
		ChannelVersions: t.Checkpoint.ChannelVersions, VersionsSeen: t.Checkpoint.VersionsSeen,
		UpdatedChannels: t.Checkpoint.UpdatedChannels, Writes: make([]WriteInfo, len(writes))}
	if d.UpdatedChannels == nil {
		d.UpdatedChannels = []string{}
	}
	if row.ParentID != nil && row.ParentVersions != nil { // nil: no parent, or it was pruned
		if d.ParentChannelVersions, err = versionText(row.ParentVersions); err != nil {
			return nil, fmt.Errorf("parent checkpoint: %w", err)
		}
	}
	d.Changes = versionChanges(d.ParentChannelVersions, d.ChannelVersions)
	for i, w := range writes {
		d.Writes[i] = WriteInfo{TaskID: w.TaskID, TaskPath: w.TaskPath, Idx: w.Idx, Channel: w.Channel, Type: w.Type,
			Bytes: w.Bytes, Value: t.PendingWrites[i].Value}
	}
	if d.Blobs, err = blobInfos(ctx, db, threadID, ns, t); err != nil {
		return nil, err
	}
	rows, err = db.Query(ctx, `SELECT checkpoint_id FROM checkpoints
		WHERE thread_id = $1 AND checkpoint_ns = $2 AND parent_checkpoint_id = $3 ORDER BY checkpoint_id LIMIT 100`, threadID, ns, id)
	if err != nil {
		return nil, fmt.Errorf("checkpoint children: %w", err)
	}
	if d.Children, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return nil, fmt.Errorf("checkpoint children: %w", err)
	}
	return d, nil
}

// blobInfos describes the blob of every channel version of t (one query;
// the blobs' sizes, not their content). A value the Python saver stored in
// the checkpoint row itself is "inline".
func blobInfos(ctx context.Context, db postgres.DBTX, threadID, ns string, t *checkpoints.Tuple) ([]BlobInfo, error) {
	chs, vers := make([]string, 0, len(t.Checkpoint.ChannelVersions)), make([]string, 0, len(t.Checkpoint.ChannelVersions))
	for ch, v := range t.Checkpoint.ChannelVersions {
		chs, vers = append(chs, ch), append(vers, v)
	}
	rows, err := db.Query(ctx, `SELECT k.channel, k.version, b.type, coalesce(pg_column_size(b.blob), 0) AS bytes
		FROM unnest($3::text[], $4::text[]) AS k(channel, version)
		JOIN checkpoint_blobs b ON b.thread_id = $1 AND b.checkpoint_ns = $2 AND b.channel = k.channel AND b.version = k.version`,
		threadID, ns, chs, vers)
	if err != nil {
		return nil, fmt.Errorf("checkpoint blobs: %w", err)
	}
	metas, err := pgx.CollectRows(rows, pgx.RowToStructByName[blobMeta])
	if err != nil {
		return nil, fmt.Errorf("checkpoint blobs: %w", err)
	}
	found := make(map[string]blobMeta, len(metas))
	for _, m := range metas {
		found[m.Channel] = m
	}
	out := make([]BlobInfo, 0, len(chs))
	for i, ch := range chs {
		b := BlobInfo{Channel: ch, Version: vers[i], Type: "empty"}
		if v, ok := t.Checkpoint.ChannelValues[ch]; ok {
			enc, _ := json.Marshal(v)
			b.Type, b.Bytes = "inline", len(enc)
		} else if m, ok := found[ch]; ok {
			b.Type, b.Bytes = m.Type, m.Bytes
		}
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b BlobInfo) int { return strings.Compare(a.Channel, b.Channel) })
	return out, nil
}

// versionText reads a channel_versions jsonb object as text versions (JSON
// numbers as their decimal text, as checkpoint_blobs keys them).
func versionText(raw []byte) (map[string]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]string{}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[k] = s
		} else if string(v) != "null" {
			out[k] = strings.TrimSpace(string(v))
		}
	}
	return out, nil
}

// versionChanges lists the channels whose version differs between parent
// (nil: every channel of cur is new) and cur, sorted by channel.
func versionChanges(parent, cur map[string]string) []VersionChange {
	out := []VersionChange{}
	seen := map[string]bool{}
	for ch, v := range cur {
		seen[ch] = true
		if pv, ok := parent[ch]; !ok || pv != v {
			c := VersionChange{Channel: ch, To: &v}
			if ok {
				c.From = &pv
			}
			out = append(out, c)
		}
	}
	for ch, pv := range parent {
		if !seen[ch] {
			out = append(out, VersionChange{Channel: ch, From: &pv})
		}
	}
	slices.SortFunc(out, func(a, b VersionChange) int { return strings.Compare(a.Channel, b.Channel) })
	return out
}

// errNoThread is the 404 of a thread that does not exist.
func errNoThread(id string) error {
	return apperr.Errorf(apperr.NotFound, "Thread with ID %s not found", id)
}
