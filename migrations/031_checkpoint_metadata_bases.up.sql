-- A checkpoint's metadata repeats, in every checkpoint of a thread, what
-- its run's config gives all of them alike: the thread and assistant ids,
-- the graph, the run's attempt, the caller, the thread's and assistant's
-- metadata and the run's configurable keys (what LangGraph's server puts
-- there, and history filters find). Weft keeps that part once per thread:
-- a checkpoint row's metadata holds its own keys (source, step, parents,
-- run_id, writes, counters_since_delta_snapshot) and "__weft_md", the key
-- of the rest in thread_checkpoint_metadata (checkpoints.SplitMetadata
-- decides, for rows Weft writes; rows other writers put stay whole).
-- weft_checkpoint_metadata puts a row's metadata back together; every
-- read of the column goes through it, and so does schema langgraph's view,
-- so LangGraph's PostgresSaver reads the whole metadata. (The view's
-- metadata is computed, as the blob view's blob is: a PostgresSaver writes
-- to schema public, as before.)

CREATE TABLE thread_checkpoint_metadata (
    thread_id TEXT NOT NULL,
    base TEXT NOT NULL,
    doc JSONB NOT NULL,
    PRIMARY KEY (thread_id, base)
);

CREATE FUNCTION weft_checkpoint_metadata(p_thread_id text, p_md jsonb) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = public, pg_temp AS $$
    SELECT CASE WHEN p_md ? '__weft_md' THEN
        coalesce((SELECT b.doc FROM thread_checkpoint_metadata b
                  WHERE b.thread_id = p_thread_id AND b.base = p_md ->> '__weft_md'), '{}'::jsonb) || (p_md - '__weft_md')
    ELSE p_md END
$$;

CREATE OR REPLACE VIEW langgraph.checkpoints AS
    SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.type, c.checkpoint,
        public.weft_checkpoint_metadata(c.thread_id, c.metadata) AS metadata
    FROM public.checkpoints c;
