-- LangGraph's Postgres checkpoint schema, exactly as its savers create it:
-- the JS saver's migrations v0..v4 plus the Python saver's v5..v9 (the three
-- thread_id indexes and checkpoint_writes.task_path). checkpoint_migrations
-- is filled with 0..9, so the real PostgresSaver (JS or Python) pointed at a
-- Weft database finds nothing left to migrate and reads and writes the same
-- rows as Weft. Column types, defaults and primary keys match
-- langgraph_schema.sql in the design references; ids are text, not uuid.
-- There are no foreign keys (LangGraph's savers write threads Weft does not
-- know) and no Weft-only columns.
--
-- Python creates the indexes CONCURRENTLY outside a transaction; here the
-- tables are new and empty, so a plain CREATE INDEX inside the migration
-- transaction is equivalent and keeps the migration atomic.

-- v0
CREATE TABLE IF NOT EXISTS checkpoint_migrations (
    v INTEGER PRIMARY KEY
);

-- v1
CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    type TEXT,
    checkpoint JSONB NOT NULL,
    metadata JSONB NOT NULL DEFAULT '{}',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);

-- v2 (+ v4: blob nullable, for 'empty' rows)
CREATE TABLE IF NOT EXISTS checkpoint_blobs (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    channel TEXT NOT NULL,
    version TEXT NOT NULL,
    type TEXT NOT NULL,
    blob BYTEA,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
);

-- v3 (+ v9: task_path)
CREATE TABLE IF NOT EXISTS checkpoint_writes (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    type TEXT,
    blob BYTEA NOT NULL,
    task_path TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);

-- v4 on a table created by an older JS setup() (no-op here).
ALTER TABLE checkpoint_blobs ALTER COLUMN blob DROP NOT NULL;

-- v6..v8
CREATE INDEX IF NOT EXISTS checkpoints_thread_id_idx ON checkpoints (thread_id);
CREATE INDEX IF NOT EXISTS checkpoint_blobs_thread_id_idx ON checkpoint_blobs (thread_id);
CREATE INDEX IF NOT EXISTS checkpoint_writes_thread_id_idx ON checkpoint_writes (thread_id);

-- v9 on a table created by an older setup() (no-op here).
ALTER TABLE checkpoint_writes ADD COLUMN IF NOT EXISTS task_path TEXT NOT NULL DEFAULT '';

INSERT INTO checkpoint_migrations (v)
SELECT generate_series(0, 9)
ON CONFLICT (v) DO NOTHING;
