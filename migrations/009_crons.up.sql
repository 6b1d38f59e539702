-- Crons (reference §11): a schedule that creates a run at each tick, on a
-- thread or on a new thread each time. See internal/crons/doc.go for the
-- scheduler that claims due crons (next_run_date <= now) and the invariants.
CREATE TABLE crons (
    cron_id          uuid PRIMARY KEY,
    -- Deleting the assistant or the thread deletes its crons.
    assistant_id     uuid NOT NULL REFERENCES assistants (assistant_id) ON DELETE CASCADE,
    thread_id        uuid REFERENCES threads (thread_id) ON DELETE CASCADE,
    schedule         text NOT NULL,
    timezone         text NOT NULL DEFAULT 'UTC',
    end_time         timestamptz,
    enabled          boolean NOT NULL DEFAULT true,
    -- Stateless crons only: delete or keep each run's new thread.
    on_run_completed text CHECK (on_run_completed IN ('delete', 'keep')),
    -- The run-create fields of each firing (assistant_id, input, config, …).
    payload          jsonb NOT NULL DEFAULT '{}',
    metadata         jsonb NOT NULL DEFAULT '{}',
    user_id          text,
    -- The next tick to fire; NULL once the schedule has passed end_time.
    next_run_date    timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT crons_on_run_completed_stateless CHECK ((on_run_completed IS NULL) = (thread_id IS NOT NULL))
);

-- The scheduler's claim: enabled crons in next_run_date order.
CREATE INDEX crons_due_idx ON crons (next_run_date) WHERE enabled AND next_run_date IS NOT NULL;
-- Search and count filters, and the cascades from threads and assistants.
CREATE INDEX crons_thread_idx ON crons (thread_id) WHERE thread_id IS NOT NULL;
CREATE INDEX crons_assistant_idx ON crons (assistant_id);
CREATE INDEX crons_created_idx ON crons (created_at DESC, cron_id DESC);
