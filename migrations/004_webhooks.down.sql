DROP INDEX IF EXISTS runs_webhook_due_idx;
ALTER TABLE runs
    DROP COLUMN IF EXISTS webhook_state,
    DROP COLUMN IF EXISTS webhook_attempts,
    DROP COLUMN IF EXISTS webhook_next_at,
    DROP COLUMN IF EXISTS webhook_last_status,
    DROP COLUMN IF EXISTS webhook_last_error,
    DROP COLUMN IF EXISTS webhook_delivered_at;
