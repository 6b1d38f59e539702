-- The thread's projection of a long list channel is stored by reference
-- (issue 16, "storage grows with the conversation, not its square"):
-- threads."values" holds the projection's small channels, and values_refs
-- = {channel: version} names, for each list channel left out of it, the
-- checkpoint_blobs row (thread, '', channel, version) that holds exactly its
-- value ('json', or 'weft_list' rebuilt from thread_elements). Readers
-- select weft_thread_values(thread_id, "values", values_refs): the same
-- jsonb a projection stored whole would be. NULL means "values" is whole
-- (every row written before this migration, and every row with encryption
-- at rest, whose blobs SQL cannot open).
--
-- A reference names a blob that exists when the projection is written (the
-- same transaction wrote or read it; weft_thread_values_refs checks) and
-- stays readable: a prune that deletes the blob stores the projection whole
-- first, a rollback projects the thread again in its transaction, a thread
-- copy copies the blobs under the same versions, and the element log keeps
-- the elements of every blob that exists (weft_elements_collect).
ALTER TABLE threads ADD COLUMN values_refs jsonb;

-- weft_thread_values is a thread's values projection: p_values with the
-- value of each blob p_refs names merged in (a name in both: the blob's).
-- A missing blob or list element is an error, never a shorter projection.
-- The document is assembled as text and parsed once: merging parsed jsonb
-- (||) walks the whole list twice more.
CREATE FUNCTION weft_thread_values(p_thread_id uuid, p_values jsonb, p_refs jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
    r record;
    b record;
    h jsonb;
    n bigint;
    list bytea;
    doc text;
BEGIN
    IF p_refs IS NULL THEN
        RETURN p_values;
    END IF;
    doc := left(coalesce(p_values, '{}')::text, -1);
    FOR r IN SELECT key, value FROM jsonb_each_text(p_refs) LOOP
        SELECT type, blob INTO b FROM checkpoint_blobs
        WHERE thread_id = p_thread_id::text AND checkpoint_ns = '' AND channel = r.key AND version = r.value;
        IF NOT FOUND OR b.type NOT IN ('json', 'weft_list') THEN
            RAISE EXCEPTION 'weft: thread % values: channel % version % is not stored', p_thread_id, r.key, r.value
                USING ERRCODE = 'P0002';
        END IF;
        list := b.blob;
        IF b.type = 'weft_list' THEN
            -- One index range scan per range of the header (weft_blob probes
            -- the index once per element).
            h := convert_from(b.blob, 'UTF8')::jsonb;
            SELECT count(*), '['::bytea || coalesce(string_agg(e.data, ','::bytea ORDER BY rg.ord, e.seq), ''::bytea) || ']'::bytea
            INTO n, list
            FROM jsonb_array_elements(h -> 'r') WITH ORDINALITY AS rg(rng, ord)
            CROSS JOIN LATERAL (SELECT x.seq, x.data FROM thread_elements x WHERE x.thread_id = p_thread_id::text
                AND x.seq BETWEEN (rg.rng ->> 0)::bigint AND (rg.rng ->> 1)::bigint OFFSET 0) e;
            IF n <> (h ->> 'n')::bigint THEN
                RAISE EXCEPTION 'weft: thread % values: channel % version % lacks % of its % elements',
                    p_thread_id, r.key, r.value, (h ->> 'n')::bigint - n, (h ->> 'n')::bigint USING ERRCODE = 'P0002';
            END IF;
        END IF;
        doc := doc || CASE WHEN doc = '{' THEN '' ELSE ', ' END || to_json(r.key)::text || ': ' || convert_from(list, 'UTF8');
    END LOOP;
    RETURN (doc || '}')::jsonb;
END
$$;

-- weft_thread_values_refs is p_refs, checked for a write: every blob it
-- names exists in thread p_thread_id with a type weft_thread_values
-- renders. A projection never stores a reference it could not read.
CREATE FUNCTION weft_thread_values_refs(p_thread_id uuid, p_refs jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    missing text;
BEGIN
    IF p_refs IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT r.key INTO missing FROM jsonb_each_text(p_refs) r
    WHERE NOT EXISTS (SELECT 1 FROM checkpoint_blobs b WHERE b.thread_id = p_thread_id::text
        AND b.checkpoint_ns = '' AND b.channel = r.key AND b.version = r.value AND b.type IN ('json', 'weft_list'))
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'weft: thread % values: channel % version % is not stored', p_thread_id, missing, p_refs ->> missing
            USING ERRCODE = 'P0002';
    END IF;
    RETURN p_refs;
END
$$;

-- weft_thread_values_inline stores the projection of thread p_thread_id
-- whole when it references version p_version of channel p_channel (a blob
-- about to be deleted). A thread id that is not a uuid names no thread.
CREATE FUNCTION weft_thread_values_inline(p_thread_id text, p_channel text, p_version text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    id uuid;
BEGIN
    BEGIN
        id := p_thread_id::uuid;
    EXCEPTION WHEN invalid_text_representation THEN
        RETURN;
    END;
    UPDATE threads SET "values" = weft_thread_values(thread_id, "values", values_refs), values_refs = NULL
    WHERE thread_id = id AND values_refs ->> p_channel = p_version;
END
$$;

-- A stock saver deleting blobs through the "langgraph" views (its
-- deleteThread) leaves the thread's projection as it was, stored whole.
CREATE OR REPLACE FUNCTION langgraph.checkpoint_blobs_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.checkpoint_ns = '' THEN
        PERFORM public.weft_thread_values_inline(OLD.thread_id, OLD.channel, OLD.version);
    END IF;
    DELETE FROM public.checkpoint_blobs WHERE thread_id = OLD.thread_id AND checkpoint_ns = OLD.checkpoint_ns
        AND channel = OLD.channel AND version = OLD.version;
    PERFORM public.weft_elements_collect(OLD.thread_id);
    RETURN OLD;
END
$$;
