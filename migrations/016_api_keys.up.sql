-- API keys of WEFT_AUTH=keys (weft keys create|list|revoke). Only the
-- SHA-256 hash of a key is stored: keys are 256-bit random strings, so a
-- plain hash is as strong as a slow one and allows an indexed lookup.
CREATE TABLE api_keys (
    key_id     uuid PRIMARY KEY,
    key_hash   bytea NOT NULL UNIQUE CHECK (length(key_hash) = 32),
    -- the tenant every request made with the key acts as ('' = the default tenant)
    tenant     text NOT NULL DEFAULT '',
    scopes     text[] NOT NULL,
    name       text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
