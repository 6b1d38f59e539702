-- Semantic search in the store (issue 20): one row per (item, field path)
-- with the text that field yields and, once the background indexer has
-- embedded it, its vector. A row without an embedding is pending: the
-- indexer on any replica claims it (SKIP LOCKED, a lease in available_at and
-- a claim_token fencing its write) and retries failures with backoff. See
-- internal/store/doc.go.
CREATE TABLE store_vectors (
    id           bigint GENERATED ALWAYS AS IDENTITY,
    namespace    text[] NOT NULL,
    key          text NOT NULL,
    -- The field path that produced text ("$", "a.b", "a[*].c.1" for the
    -- second text a[*].c selects).
    field        text NOT NULL,
    text         text NOT NULL,
    -- NULL: not embedded yet. Stored as the model returned it (float4, like
    -- pgvector's vector); norm is its Euclidean norm, computed once at write,
    -- so a search computes cos = e·q / (norm · |q|) with one sum per row.
    embedding    real[],
    norm         double precision,
    -- The index's embed setting that made the vector; search only uses
    -- vectors of the configured model and dims.
    model        text,
    -- Pending rows: failures so far, when the row may next be claimed (a
    -- claim pushes it a lease ahead; a failure a backoff ahead), the fence of
    -- the current claim, and the last failure.
    attempts     integer NOT NULL DEFAULT 0,
    available_at timestamptz NOT NULL DEFAULT now(),
    claim_token  uuid,
    last_error   text,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, key, field),
    UNIQUE (id),
    -- A deleted item (DELETE, expiry swept) takes its vectors with it.
    FOREIGN KEY (namespace, key) REFERENCES store_items (namespace, key) ON DELETE CASCADE,
    CONSTRAINT store_vectors_embedded CHECK ((embedding IS NULL) = (model IS NULL) AND (embedding IS NULL) = (norm IS NULL))
);

-- Keep the vector in the row (up to ~2,000 dimensions) rather than in the
-- TOAST table: a search reads every candidate vector, and an out-of-line
-- value costs an extra index lookup and copy per row. Long texts still move
-- out (text keeps the default EXTENDED storage, which PostgreSQL moves first).
ALTER TABLE store_vectors ALTER COLUMN embedding SET STORAGE MAIN;
ALTER TABLE store_vectors SET (toast_tuple_target = 8160);

-- The indexer's claim predicate: pending rows by due time.
CREATE INDEX store_vectors_pending_idx ON store_vectors (available_at) WHERE embedding IS NULL;
