-- The audit of each attempt (one claim of a dispatch) gains what the UI's
-- attempts view shows: the lease it held, its heartbeats, and the calls the
-- fence refused it once its claim was no longer valid (a worker that lost
-- its lease and kept going: each commit or nack it sent afterwards is
-- counted here and wrote nothing).
--
--   claim_token      the attempt's claim (matches a refused call to it)
--   lease_expires_at the lease granted by the claim or the last heartbeat
--   heartbeat_at     the last heartbeat, heartbeats how many
--   fenced_writes    commits and nacks refused with 409 (fenced), fenced_at the last
ALTER TABLE run_dispatch_attempts
    ADD COLUMN claim_token uuid,
    ADD COLUMN lease_expires_at timestamptz,
    ADD COLUMN heartbeat_at timestamptz,
    ADD COLUMN heartbeats integer NOT NULL DEFAULT 0,
    ADD COLUMN fenced_writes integer NOT NULL DEFAULT 0,
    ADD COLUMN fenced_at timestamptz;
