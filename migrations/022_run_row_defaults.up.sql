-- A run's row leaves out what every run would store alike, and every read
-- of a run puts it back, so the Run object reads byte for byte as a row
-- stored whole (jsonb orders an object's keys itself; rows stored before
-- this migration hold everything and read unchanged). On a long
-- conversation these were a third of each run's row. internal/runs strips
-- exactly what these functions fill in (storedKwargs, storedMetadata) and a
-- test holds the two together.
--
-- weft_run_kwargs is the whole kwargs document: the stored fields over the
-- nine fields that hold their default (what a request that does not set
-- them gets).
CREATE FUNCTION weft_run_kwargs(k JSONB) RETURNS JSONB
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT '{"command": null, "webhook": null, "resumable": false, "subgraphs": false, "temporary": false,
             "feedback_keys": null, "on_disconnect": "continue", "interrupt_after": null, "interrupt_before": null}'::jsonb || k
$$;

-- weft_run_metadata is the whole metadata of a run of assistant a: the
-- assistant_id every run's metadata gets (unless the client set one),
-- then the stored fields. STABLE as jsonb_build_object is, so that the
-- planner inlines it into the queries that select it.
CREATE FUNCTION weft_run_metadata(m JSONB, a UUID) RETURNS JSONB
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT jsonb_build_object('assistant_id', a::text) || m
$$;
