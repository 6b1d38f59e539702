DROP INDEX IF EXISTS threads_expires_at_idx;
ALTER TABLE threads
    DROP COLUMN IF EXISTS expires_at,
    DROP COLUMN IF EXISTS ttl_strategy,
    DROP COLUMN IF EXISTS ttl_minutes;
