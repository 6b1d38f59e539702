package checkpoints

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weftdev/weft/internal/postgres"
)

// Storage is what a thread's checkpoints occupy, as stored: the shape of
// LangGraph's thread storage report (GET /threads/{thread_id}/storage).
// Bytes are pg_column_size of the data columns (after PostgreSQL's
// compression; no row headers, no indexes), of every namespace.
type Storage struct {
	// Checkpoints: the checkpoint rows (checkpoint JSON and metadata),
	// plus the metadata kept once per thread (thread_checkpoint_metadata)
	// that their metadata names.
	CheckpointCount, CheckpointBytes int64
	// Channels: per channel, its stored versions (checkpoint_blobs rows)
	// and their bytes; a list stored per element (a weft_list blob) counts
	// the elements of the thread's element log its versions name, once
	// each (an element two list channels name counts in both).
	Channels map[string]ChannelStorage
	// Writes: the pending writes (checkpoint_writes rows).
	WriteCount, WriteBytes int64
}

// ChannelStorage is one channel's stored versions and their bytes.
type ChannelStorage struct {
	Versions int64 `json:"versions" validate:"required"`
	Bytes    int64 `json:"bytes" validate:"required"`
}

// ChannelCount is the number of stored channel versions; ChannelBytes
// their bytes.
func (s *Storage) ChannelCount() (n int64) {
	for _, c := range s.Channels {
		n += c.Versions
	}
	return n
}

// ChannelBytes is the bytes of every channel's versions.
func (s *Storage) ChannelBytes() (n int64) {
	for _, c := range s.Channels {
		n += c.Bytes
	}
	return n
}

// storageSQL measures a thread in one statement: index ranges on
// thread_id of checkpoints, checkpoint_blobs, checkpoint_writes,
// thread_checkpoint_metadata and thread_elements. The elements of each list
// channel are those in the union of the seq ranges its headers name.
const storageSQL = `
WITH blobs AS (
    SELECT channel, type, blob FROM checkpoint_blobs WHERE thread_id = $1
), per_channel AS (
    SELECT channel, count(*) AS versions, coalesce(sum(pg_column_size(blob)), 0)::bigint AS bytes
    FROM blobs GROUP BY channel
), list_seqs AS (
    SELECT b.channel, range_agg(int8range((r.rng ->> 0)::bigint, (r.rng ->> 1)::bigint, '[]')) AS seqs
    FROM blobs b CROSS JOIN LATERAL jsonb_array_elements(convert_from(b.blob, 'UTF8')::jsonb -> 'r') AS r(rng)
    WHERE b.type = 'weft_list'
    GROUP BY b.channel
), list_elements AS (
    SELECT l.channel, coalesce(sum(pg_column_size(e.data)), 0)::bigint AS bytes
    FROM list_seqs l JOIN thread_elements e ON e.thread_id = $1 AND e.seq <@ l.seqs
    GROUP BY l.channel
)
SELECT
    (SELECT count(*) FROM checkpoints WHERE thread_id = $1) AS checkpoint_count,
    (SELECT coalesce(sum(pg_column_size(checkpoint) + pg_column_size(metadata)), 0)::bigint FROM checkpoints WHERE thread_id = $1)
      + (SELECT coalesce(sum(pg_column_size(doc)), 0)::bigint FROM thread_checkpoint_metadata WHERE thread_id = $1) AS checkpoint_bytes,
    (SELECT count(*) FROM checkpoint_writes WHERE thread_id = $1) AS write_count,
    (SELECT coalesce(sum(pg_column_size(blob)), 0)::bigint FROM checkpoint_writes WHERE thread_id = $1) AS write_bytes,
    (SELECT coalesce(jsonb_object_agg(p.channel, jsonb_build_object('versions', p.versions, 'bytes', p.bytes + coalesce(l.bytes, 0))), '{}')
     FROM per_channel p LEFT JOIN list_elements l ON l.channel = p.channel) AS channels`

// ThreadStorage measures thread threadID's checkpoints (a thread without
// any measures zero). Its cost is linear in the thread's rows: callers
// measure one thread at a time.
func ThreadStorage(ctx context.Context, db postgres.DBTX, threadID string) (*Storage, error) {
	s := &Storage{}
	var channels []byte
	err := db.QueryRow(ctx, storageSQL, threadID).Scan(&s.CheckpointCount, &s.CheckpointBytes, &s.WriteCount, &s.WriteBytes, &channels)
	if err != nil {
		return nil, fmt.Errorf("thread storage: %w", err)
	}
	if err := json.Unmarshal(channels, &s.Channels); err != nil {
		return nil, fmt.Errorf("thread storage: channels: %w", err)
	}
	return s, nil
}
