-- A run's input is stored by reference once the checkpoint that holds it
-- is committed (issue 16): LangGraph's input checkpoint of the run (metadata
-- source "input" and the run's run_id, root namespace) stores the input as
-- its __start__ channel value, so runs.kwargs holds input_ref = the version
-- of that checkpoint_blobs row (thread, '', '__start__', version) instead
-- of a second copy of the input. Every read of a run's kwargs selects
-- weft_run_kwargs(kwargs, thread_id): the same jsonb as a row stored whole.
-- Rows without input_ref (every row written before this migration, a run
-- not started yet, a command, an input the blob does not read back as,
-- and every row with encryption at rest, whose blobs SQL cannot open) hold
-- their input whole.
--
-- A reference names a blob that holds exactly the input (weft_run_input_ref
-- checks it in the commit that writes the blob) and stays readable: a blob
-- row is never rewritten, a prune that deletes the blob stores the input
-- whole first (eventlog.MaterializeThread), so does the langgraph views'
-- blob delete, a rollback deletes the run with its input checkpoint, a
-- thread delete the runs with the blobs, and reencrypt stores the input
-- whole and sealed before it seals the blobs.

-- weft_run_input is the input a run of thread p_thread_id references:
-- the __start__ blob of version p_version. A missing blob is an error,
-- never a run without its input.
CREATE FUNCTION weft_run_input(p_thread_id uuid, p_version text) RETURNS jsonb
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
    b record;
BEGIN
    SELECT type, blob INTO b FROM checkpoint_blobs
    WHERE thread_id = p_thread_id::text AND checkpoint_ns = '' AND channel = '__start__' AND version = p_version;
    IF NOT FOUND OR b.type <> 'json' THEN
        RAISE EXCEPTION 'weft: thread % run input: version % of __start__ is not stored', p_thread_id, p_version
            USING ERRCODE = 'P0002';
    END IF;
    RETURN convert_from(b.blob, 'UTF8')::jsonb;
END
$$;

-- weft_run_input_whole is a run's stored kwargs k (of thread t) with the
-- input whole: an input_ref replaced by the input it names.
CREATE FUNCTION weft_run_input_whole(k jsonb, t uuid) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN k ? 'input_ref' THEN (k - 'input_ref') || jsonb_build_object('input', weft_run_input(t, k ->> 'input_ref'))
                ELSE k END
$$;

-- weft_run_kwargs is a run's whole kwargs document: the nine fields that
-- hold their default (migration 022), then the stored fields with the
-- input whole. It takes the run's thread, where the input's blob is.
DROP FUNCTION weft_run_kwargs(jsonb);
CREATE FUNCTION weft_run_kwargs(k jsonb, t uuid) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT '{"command": null, "webhook": null, "resumable": false, "subgraphs": false, "temporary": false,
             "feedback_keys": null, "on_disconnect": "continue", "interrupt_after": null, "interrupt_before": null}'::jsonb
        || weft_run_input_whole(k, t)
$$;

-- weft_run_input_ref stores run p_run_id's input (of at least p_min_bytes
-- as jsonb prints it) by reference to blob (p_thread_id, '', '__start__',
-- p_version) when a read of that blob gives exactly the stored input: the
-- same text as jsonb (jsonb equality would take 1.0 for 1), from a plain
-- 'json' row (a sealed one stays whole). A blob jsonb cannot read (a NUL
-- escape, bad UTF-8: written by a foreign saver) leaves the input whole;
-- it never fails the commit. Nor does it wait for the run's row: the
-- commit holds the run's dispatch, and a cancel locks the run's row before
-- the dispatch; a row locked meanwhile keeps its input whole.
CREATE FUNCTION weft_run_input_ref(p_run_id uuid, p_thread_id uuid, p_version text, p_min_bytes int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    input text;
    raw bytea;
    stored text;
BEGIN
    SELECT (kwargs -> 'input')::text INTO input FROM runs WHERE run_id = p_run_id AND thread_id = p_thread_id
    FOR NO KEY UPDATE SKIP LOCKED;
    IF input IS NULL OR input = 'null' OR octet_length(input) < p_min_bytes THEN
        RETURN;
    END IF;
    SELECT blob INTO raw FROM checkpoint_blobs WHERE thread_id = p_thread_id::text AND checkpoint_ns = ''
        AND channel = '__start__' AND version = p_version AND type = 'json';
    IF NOT FOUND THEN
        RETURN;
    END IF;
    BEGIN
        stored := convert_from(raw, 'UTF8')::jsonb::text;
    EXCEPTION WHEN data_exception THEN
        RETURN;
    END;
    IF stored = input THEN
        UPDATE runs SET kwargs = (kwargs - 'input') || jsonb_build_object('input_ref', p_version) WHERE run_id = p_run_id;
    END IF;
END
$$;

-- weft_run_input_inline stores whole the input of every run of thread
-- p_thread_id that references version p_version of __start__ (a blob about
-- to be deleted). A thread id that is not a uuid names no run.
CREATE FUNCTION weft_run_input_inline(p_thread_id text, p_version text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    id uuid;
BEGIN
    BEGIN
        id := p_thread_id::uuid;
    EXCEPTION WHEN invalid_text_representation THEN
        RETURN;
    END;
    UPDATE runs SET kwargs = weft_run_input_whole(kwargs, thread_id)
    WHERE thread_id = id AND kwargs ->> 'input_ref' = p_version;
END
$$;

-- A stock saver deleting blobs through the "langgraph" views (its
-- deleteThread) leaves the thread's projection and its runs' inputs as
-- they were, stored whole.
CREATE OR REPLACE FUNCTION langgraph.checkpoint_blobs_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.checkpoint_ns = '' THEN
        PERFORM public.weft_thread_values_inline(OLD.thread_id, OLD.channel, OLD.version);
        IF OLD.channel = '__start__' THEN
            PERFORM public.weft_run_input_inline(OLD.thread_id, OLD.version);
        END IF;
    END IF;
    DELETE FROM public.checkpoint_blobs WHERE thread_id = OLD.thread_id AND checkpoint_ns = OLD.checkpoint_ns
        AND channel = OLD.channel AND version = OLD.version;
    PERFORM public.weft_elements_collect(OLD.thread_id);
    RETURN OLD;
END
$$;
