-- Thread time-to-live (reference §4.1 `ttl`): a thread given a ttl expires
-- ttl_minutes after its last activity (creation, PATCH, a new run); the
-- sweeper then deletes it (strategy delete) or prunes it to its latest
-- checkpoint (keep_latest). See internal/threads/ttl.go.
ALTER TABLE threads
    ADD COLUMN ttl_minutes  double precision CHECK (ttl_minutes > 0),
    ADD COLUMN ttl_strategy text CHECK (ttl_strategy IN ('delete', 'keep_latest')),
    ADD COLUMN expires_at   timestamptz;

-- The sweeper's claim predicate: threads due to expire.
CREATE INDEX threads_expires_at_idx ON threads (expires_at) WHERE expires_at IS NOT NULL;
