UPDATE runs SET kwargs = weft_run_kwargs(kwargs), metadata = weft_run_metadata(metadata, assistant_id)
WHERE kwargs <> weft_run_kwargs(kwargs) OR metadata <> weft_run_metadata(metadata, assistant_id);
DROP FUNCTION IF EXISTS weft_run_kwargs(JSONB);
DROP FUNCTION IF EXISTS weft_run_metadata(JSONB, UUID);
