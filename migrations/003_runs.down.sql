DROP FUNCTION IF EXISTS weft_fence(uuid, uuid, boolean);
DROP TABLE IF EXISTS run_writes;
DROP TABLE IF EXISTS run_commits;
DROP TABLE IF EXISTS run_events;
DROP TABLE IF EXISTS run_dispatch_attempts;
DROP TABLE IF EXISTS run_dispatches;
DROP TABLE IF EXISTS runs;
DROP TABLE IF EXISTS assistants;
ALTER TABLE threads DROP COLUMN IF EXISTS active_run_id, DROP COLUMN IF EXISTS latest_run_id, DROP COLUMN IF EXISTS dispatch_epoch;
