UPDATE runs SET kwargs = weft_run_kwargs(kwargs) WHERE kwargs <> weft_run_kwargs(kwargs);
DROP FUNCTION IF EXISTS weft_run_kwargs(JSONB);
