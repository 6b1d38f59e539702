-- Inputs stored by reference are stored whole again.
UPDATE runs SET kwargs = weft_run_input_whole(kwargs, thread_id) WHERE kwargs ? 'input_ref';

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

DROP FUNCTION IF EXISTS weft_run_input_inline(text, text);
DROP FUNCTION IF EXISTS weft_run_input_ref(uuid, uuid, text, int);
DROP FUNCTION IF EXISTS weft_run_kwargs(jsonb, uuid);
DROP FUNCTION IF EXISTS weft_run_input_whole(jsonb, uuid);
DROP FUNCTION IF EXISTS weft_run_input(uuid, text);

-- Migration 022's weft_run_kwargs.
CREATE FUNCTION weft_run_kwargs(k JSONB) RETURNS JSONB
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT '{"command": null, "webhook": null, "resumable": false, "subgraphs": false, "temporary": false,
             "feedback_keys": null, "on_disconnect": "continue", "interrupt_after": null, "interrupt_before": null}'::jsonb || k
$$;
