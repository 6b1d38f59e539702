-- Summaries of a thread's message log (seed 001's summary layer, as a view
-- never as lossy storage): a client or a graph node stores a summary of
-- the elements of a list channel with seqs from_seq..to_seq (inclusive;
-- the seqs of the thread's message log, GET /threads/{id}/messages). A
-- summary is a record beside the checkpoints: it never replaces or changes
-- a checkpoint value. Reads pick the widest summary that ends before a
-- window (see internal/messagelog/summary.go).
--
-- Deleted with the thread's checkpoints (CheckpointThreadDelete, which
-- also restarts the thread's seqs) and copied with them.
CREATE TABLE thread_summaries (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    thread_id TEXT NOT NULL,
    channel TEXT NOT NULL,
    from_seq BIGINT NOT NULL,
    to_seq BIGINT NOT NULL,
    summary JSONB NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK (from_seq >= 1 AND to_seq >= from_seq),
    UNIQUE (thread_id, channel, from_seq, to_seq)
);
CREATE INDEX thread_summaries_end_idx ON thread_summaries (thread_id, channel, to_seq);
