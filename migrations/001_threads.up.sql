-- Threads: the conversation containers, with an optional parent (hierarchy).
-- The foreign key on parent_thread_id has no ON DELETE action on purpose:
-- the application chooses reject / detach / cascade, and the key guarantees
-- that no child can ever point at a deleted parent, whatever races happen.
CREATE TABLE threads (
    thread_id        uuid PRIMARY KEY,
    parent_thread_id uuid REFERENCES threads (thread_id),
    resource_id      text,
    metadata         jsonb NOT NULL DEFAULT '{}',
    status           text NOT NULL DEFAULT 'idle'
                     CHECK (status IN ('idle', 'busy', 'interrupted', 'error')),
    "values"         jsonb,
    interrupts       jsonb NOT NULL DEFAULT '{}',
    error            jsonb,
    config           jsonb NOT NULL DEFAULT '{}',
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    state_updated_at timestamptz,
    CONSTRAINT threads_not_own_parent CHECK (parent_thread_id <> thread_id),
    CONSTRAINT threads_resource_id_normalized CHECK (resource_id IS NULL OR resource_id = btrim(resource_id) AND resource_id <> '')
);

CREATE INDEX threads_parent_thread_id_idx ON threads (parent_thread_id);
CREATE INDEX threads_metadata_idx ON threads USING gin (metadata jsonb_path_ops);
CREATE INDEX threads_updated_at_idx ON threads (updated_at DESC, thread_id DESC);
CREATE INDEX threads_created_at_idx ON threads (created_at DESC, thread_id DESC);
