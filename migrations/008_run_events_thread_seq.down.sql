DROP INDEX IF EXISTS run_events_thread_seq_idx;
ALTER TABLE run_events DROP COLUMN IF EXISTS thread_seq;
DROP SEQUENCE IF EXISTS run_events_thread_seq;
