-- Compact storage of list-valued channels (DESIGN §5, "storage grows with the
-- conversation, not its square").
--
-- thread_elements is the per-thread element log: each distinct element of
-- a list channel Weft writes (a message, a log entry) is stored once per
-- thread, under a seq that grows within the thread, with the run and step of
-- the checkpoint that first held it (the thread's message log reads them).
-- hash is SHA-256 of data and finds an element again when a list is not its
-- parent's list plus new elements (a replaced or removed message, a fork).
--
-- A checkpoint_blobs row of type 'weft_list' holds, instead of the list's
-- JSON, a header {"n": count, "h": list hash, "r": [[from, to], ...]}: the
-- inclusive seq ranges whose elements, in order, are the list. The list's
-- JSON is exactly '[' || the elements' data joined by ',' || ']'.
--
-- thread_element_seqs hands out a thread's seqs in contiguous blocks, so
-- a conversation's elements stay one range however many threads write at
-- once.
CREATE TABLE thread_elements (
    thread_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    hash BYTEA NOT NULL,
    data BYTEA NOT NULL,
    run_id TEXT,
    step INTEGER,
    PRIMARY KEY (thread_id, seq)
);
CREATE INDEX thread_elements_hash_idx ON thread_elements (thread_id, hash);

CREATE TABLE thread_element_seqs (
    thread_id TEXT PRIMARY KEY,
    last BIGINT NOT NULL
);

-- weft_blob returns a blob as LangGraph stores it: a 'weft_list' header
-- becomes the list's JSON; any other blob is returned as it is.
CREATE FUNCTION weft_blob(p_thread_id TEXT, p_type TEXT, p_blob BYTEA) RETURNS BYTEA
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN p_type IS DISTINCT FROM 'weft_list' THEN p_blob ELSE (
        SELECT '['::bytea || coalesce(string_agg(e.data, ','::bytea ORDER BY r.ord, s.seq), ''::bytea) || ']'::bytea
        FROM jsonb_array_elements(convert_from(p_blob, 'UTF8')::jsonb -> 'r') WITH ORDINALITY AS r(rng, ord)
        CROSS JOIN LATERAL generate_series((r.rng ->> 0)::bigint, (r.rng ->> 1)::bigint) AS s(seq)
        JOIN thread_elements e ON e.thread_id = p_thread_id AND e.seq = s.seq)
    END
$$;

-- weft_list_extend is the ranges of a list that is its parent version's
-- list (ranges p_ranges) plus the p_count elements just stored under the
-- seqs ending at p_last: the last range grows when the new block follows
-- it. A missing parent version is an error, never a shorter list.
CREATE FUNCTION weft_list_extend(p_ranges JSONB, p_last BIGINT, p_count BIGINT) RETURNS JSONB
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    n INTEGER;
BEGIN
    IF p_ranges IS NULL THEN
        RAISE EXCEPTION 'weft: the parent version of a list is missing' USING ERRCODE = 'P0002';
    END IF;
    IF p_count = 0 THEN
        RETURN p_ranges;
    END IF;
    n := jsonb_array_length(p_ranges);
    IF n > 0 AND (p_ranges -> (n - 1) ->> 1)::BIGINT = p_last - p_count THEN
        RETURN jsonb_set(p_ranges, ARRAY[(n - 1)::TEXT, '1'], to_jsonb(p_last));
    END IF;
    RETURN p_ranges || jsonb_build_array(jsonb_build_array(p_last - p_count + 1, p_last));
END
$$;

-- weft_elements_collect deletes the elements of a thread that no
-- 'weft_list' blob of the thread names any more (after a prune, a rollback,
-- a delete through the langgraph views).
CREATE FUNCTION weft_elements_collect(p_thread_id TEXT) RETURNS void
LANGUAGE sql AS $$
    WITH live AS (
        SELECT coalesce(range_agg(int8range((r.rng ->> 0)::bigint, (r.rng ->> 1)::bigint, '[]')), '{}'::int8multirange) AS m
        FROM checkpoint_blobs b, jsonb_array_elements(convert_from(b.blob, 'UTF8')::jsonb -> 'r') AS r(rng)
        WHERE b.thread_id = p_thread_id AND b.type = 'weft_list')
    DELETE FROM thread_elements e USING live
    WHERE e.thread_id = p_thread_id AND NOT (e.seq <@ live.m)
$$;

-- weft_blob_type is the type LangGraph's savers know for a stored type.
CREATE FUNCTION weft_blob_type(p_type TEXT) RETURNS TEXT
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN p_type = 'weft_list' THEN 'json' ELSE p_type END
$$;

-- The schema "langgraph" presents LangGraph's four tables as views of
-- Weft's, with every blob in LangGraph's own format: a stock PostgresSaver
-- given schema "langgraph" (JS: {schema: "langgraph"}; Python: the
-- connection's search_path) reads every thread Weft writes, compact ones
-- included, and can write new ones (its blob inserts land in
-- public.checkpoint_blobs as plain rows).
CREATE SCHEMA IF NOT EXISTS langgraph;

CREATE VIEW langgraph.checkpoint_migrations AS SELECT v FROM public.checkpoint_migrations;
CREATE VIEW langgraph.checkpoints AS SELECT * FROM public.checkpoints;
CREATE VIEW langgraph.checkpoint_writes AS SELECT * FROM public.checkpoint_writes;
CREATE VIEW langgraph.checkpoint_blobs AS
    SELECT b.thread_id, b.checkpoint_ns, b.channel, b.version,
        public.weft_blob_type(b.type) AS type, public.weft_blob(b.thread_id, b.type, b.blob) AS blob
    FROM public.checkpoint_blobs b;

CREATE FUNCTION langgraph.checkpoint_blobs_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
    VALUES (NEW.thread_id, coalesce(NEW.checkpoint_ns, ''), NEW.channel, NEW.version, NEW.type, NEW.blob)
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING;
    RETURN NEW;
END
$$;
CREATE TRIGGER checkpoint_blobs_insert INSTEAD OF INSERT ON langgraph.checkpoint_blobs
    FOR EACH ROW EXECUTE FUNCTION langgraph.checkpoint_blobs_insert();

CREATE FUNCTION langgraph.checkpoint_blobs_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM public.checkpoint_blobs WHERE thread_id = OLD.thread_id AND checkpoint_ns = OLD.checkpoint_ns
        AND channel = OLD.channel AND version = OLD.version;
    PERFORM public.weft_elements_collect(OLD.thread_id);
    RETURN OLD;
END
$$;
CREATE TRIGGER checkpoint_blobs_delete INSTEAD OF DELETE ON langgraph.checkpoint_blobs
    FOR EACH ROW EXECUTE FUNCTION langgraph.checkpoint_blobs_delete();
