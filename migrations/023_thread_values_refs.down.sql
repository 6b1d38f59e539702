-- Projections stored by reference are stored whole again (SQL can render
-- them, unlike the event and result references of migrations 018 and 020).
UPDATE threads SET "values" = weft_thread_values(thread_id, "values", values_refs), values_refs = NULL
WHERE values_refs IS NOT NULL;

CREATE OR REPLACE FUNCTION langgraph.checkpoint_blobs_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM public.checkpoint_blobs WHERE thread_id = OLD.thread_id AND checkpoint_ns = OLD.checkpoint_ns
        AND channel = OLD.channel AND version = OLD.version;
    PERFORM public.weft_elements_collect(OLD.thread_id);
    RETURN OLD;
END
$$;

DROP FUNCTION IF EXISTS weft_thread_values_inline(TEXT, TEXT, TEXT);
DROP FUNCTION IF EXISTS weft_thread_values_refs(uuid, jsonb);
DROP FUNCTION IF EXISTS weft_thread_values(uuid, jsonb, jsonb);
ALTER TABLE threads DROP COLUMN values_refs;
