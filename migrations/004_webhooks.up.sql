-- Webhook delivery of finished runs (reference §6.6). A run whose kwargs name
-- a webhook is marked pending in the statement that ends it; every replica's
-- delivery loop claims due deliveries (FOR UPDATE SKIP LOCKED, leased by
-- pushing webhook_next_at forward), POSTs the run, and records the attempt.
ALTER TABLE runs
    ADD COLUMN webhook_state        text CHECK (webhook_state IN ('pending', 'delivered', 'failed')),
    ADD COLUMN webhook_attempts     integer NOT NULL DEFAULT 0,
    ADD COLUMN webhook_next_at      timestamptz,
    ADD COLUMN webhook_last_status  integer,
    ADD COLUMN webhook_last_error   text,
    ADD COLUMN webhook_delivered_at timestamptz;

-- The claim predicate of the delivery loop: due pending deliveries.
CREATE INDEX runs_webhook_due_idx ON runs (webhook_next_at) WHERE webhook_state = 'pending';
