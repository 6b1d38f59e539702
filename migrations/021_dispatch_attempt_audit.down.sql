ALTER TABLE run_dispatch_attempts
    DROP COLUMN IF EXISTS claim_token,
    DROP COLUMN IF EXISTS lease_expires_at,
    DROP COLUMN IF EXISTS heartbeat_at,
    DROP COLUMN IF EXISTS heartbeats,
    DROP COLUMN IF EXISTS fenced_writes,
    DROP COLUMN IF EXISTS fenced_at;
