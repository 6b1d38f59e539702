-- A run's row stores its kwargs without the fields that hold their default
-- (what a request that does not set them gets): on a long conversation
-- those nine fields were a quarter of each run's row. weft_run_kwargs is
-- the whole document, the stored fields over the defaults; every read of
-- a run selects it. jsonb orders an object's keys itself, so the document
-- reads byte for byte as one stored whole (rows stored before this
-- migration hold every field and read unchanged). internal/runs strips
-- exactly these fields (storedKwargs) and a test holds the two together.
CREATE FUNCTION weft_run_kwargs(k JSONB) RETURNS JSONB
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT '{"command": null, "webhook": null, "resumable": false, "subgraphs": false, "temporary": false,
             "feedback_keys": null, "on_disconnect": "continue", "interrupt_after": null, "interrupt_before": null}'::jsonb || k
$$;
