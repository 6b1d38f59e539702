-- Every row's metadata whole again, then the view as migration 014 made it.
UPDATE checkpoints SET metadata = weft_checkpoint_metadata(thread_id, metadata) WHERE metadata ? '__weft_md';
CREATE OR REPLACE VIEW langgraph.checkpoints AS SELECT * FROM public.checkpoints;
DROP FUNCTION weft_checkpoint_metadata(text, jsonb);
DROP TABLE thread_checkpoint_metadata;
