-- Runs, their dispatches (the durable delivery queue), their event log, and
-- the system assistants. See internal/dispatch/doc.go and internal/runs/doc.go
-- for the state machines these tables hold.

-- Threads point at their executing and latest run, and carry the dispatch
-- epoch that interrupt/rollback bump to supersede queued work.
ALTER TABLE threads
    ADD COLUMN active_run_id  uuid,
    ADD COLUMN latest_run_id  uuid,
    ADD COLUMN dispatch_epoch bigint NOT NULL DEFAULT 0;

-- One row per assistant. System assistants (one per registered graph, id =
-- uuid5(6ba7b821-9dad-11d1-80b4-00c04fd430c8, graph_id)) are upserted at start.
CREATE TABLE assistants (
    assistant_id uuid PRIMARY KEY,
    graph_id     text NOT NULL,
    name         text NOT NULL,
    description  text,
    config       jsonb NOT NULL DEFAULT '{}',
    context      jsonb NOT NULL DEFAULT '{}',
    metadata     jsonb NOT NULL DEFAULT '{}',
    version      integer NOT NULL DEFAULT 1,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX assistants_graph_id_idx ON assistants (graph_id);

-- A run is the user's intent and its outcome: the source of truth for status.
CREATE TABLE runs (
    run_id             uuid PRIMARY KEY,
    thread_id          uuid NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
    assistant_id       uuid NOT NULL,
    graph_id           text NOT NULL,
    status             text NOT NULL DEFAULT 'pending'
                       CHECK (status IN ('pending', 'running', 'success', 'error', 'timeout', 'interrupted')),
    multitask_strategy text NOT NULL DEFAULT 'enqueue',
    kwargs             jsonb NOT NULL DEFAULT '{}',
    metadata           jsonb NOT NULL DEFAULT '{}',
    error              jsonb,
    result             jsonb,
    temporary          boolean NOT NULL DEFAULT false,
    attempt            integer NOT NULL DEFAULT 0,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    started_at         timestamptz,
    finished_at        timestamptz
);
-- Runs and dispatches are updated a few times each in their short lives:
-- free room in each page lets updates that touch no index stay on the page
-- (HOT), and early autovacuum keeps the claim index free of dead entries.
ALTER TABLE runs SET (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 200);
CREATE INDEX runs_thread_created_idx ON runs (thread_id, created_at DESC, run_id DESC);
CREATE INDEX runs_inflight_idx ON runs (thread_id) WHERE status IN ('pending', 'running');
CREATE INDEX runs_temporary_idx ON runs (finished_at) WHERE temporary;

-- A dispatch is one run's delivery to workers: lease, fence, retry, audit.
CREATE TABLE run_dispatches (
    dispatch_id      uuid PRIMARY KEY,
    seq              bigserial NOT NULL,
    run_id           uuid NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    thread_id        uuid NOT NULL,
    graph_id         text NOT NULL,
    state            text NOT NULL DEFAULT 'queued'
                     CHECK (state IN ('queued', 'claimed', 'acked', 'cancelled', 'superseded', 'dead_letter')),
    priority         integer NOT NULL DEFAULT 128,
    available_at     timestamptz NOT NULL DEFAULT now(),
    attempt          integer NOT NULL DEFAULT 0,
    max_attempts     integer NOT NULL DEFAULT 5 CHECK (max_attempts > 0),
    epoch            bigint NOT NULL DEFAULT 0,
    claim_token      uuid,
    claimed_by       text,
    claimed_at       timestamptz,
    lease_expires_at timestamptz,
    cancel_action    text CHECK (cancel_action IN ('interrupt', 'rollback')),
    last_error       text,
    created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    finished_at      timestamptz,
    CONSTRAINT run_dispatches_claim_fields CHECK (
        (state = 'claimed') = (claim_token IS NOT NULL AND lease_expires_at IS NOT NULL))
);
ALTER TABLE run_dispatches SET (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.0,
    autovacuum_vacuum_threshold = 200, autovacuum_vacuum_cost_delay = 0);
-- One executing run per thread is a database fact.
CREATE UNIQUE INDEX run_dispatches_one_claimed_idx ON run_dispatches (thread_id) WHERE state = 'claimed';
CREATE INDEX run_dispatches_claim_idx ON run_dispatches (priority, available_at, seq) WHERE state = 'queued';
CREATE INDEX run_dispatches_thread_open_idx ON run_dispatches (thread_id, seq) WHERE state IN ('queued', 'claimed');
CREATE INDEX run_dispatches_lease_idx ON run_dispatches (lease_expires_at) WHERE state = 'claimed';
CREATE INDEX run_dispatches_run_idx ON run_dispatches (run_id);
CREATE INDEX run_dispatches_state_idx ON run_dispatches (state, updated_at DESC);

-- Every claim of a dispatch (an attempt), with its worker, timings and end.
CREATE TABLE run_dispatch_attempts (
    dispatch_id uuid NOT NULL REFERENCES run_dispatches (dispatch_id) ON DELETE CASCADE,
    attempt     integer NOT NULL,
    worker      text NOT NULL,
    claimed_at  timestamptz NOT NULL,
    ended_at    timestamptz,
    outcome     text,
    error       text,
    PRIMARY KEY (dispatch_id, attempt)
);

-- The durable per-run event log (values, updates, custom, error, end), read
-- by wait/join now and by SSE streams and Last-Event-ID resumption.
CREATE TABLE run_events (
    run_id     uuid NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    seq        bigint NOT NULL,
    thread_id  uuid NOT NULL,
    event      text NOT NULL,
    data       jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, seq)
);
-- The thread-level stream reads every run's events of a thread in order:
-- one writer per thread at a time, so (created_at, run_id, seq) is it.
CREATE INDEX run_events_thread_idx ON run_events (thread_id, created_at, run_id, seq);

-- Idempotency of the commit coordinator: one row per applied commit key
-- (a checkpoint id or a worker-chosen commit id) with the result it returned.
CREATE TABLE run_commits (
    run_id     uuid NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    commit_key text NOT NULL,
    result     jsonb NOT NULL,
    PRIMARY KEY (run_id, commit_key)
);

-- The pending writes a run recorded (LangGraph's checkpoint_writes has no
-- run column), so that a rollback deletes exactly what the run wrote.
CREATE TABLE run_writes (
    run_id        uuid NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    thread_id     text NOT NULL,
    checkpoint_ns text NOT NULL,
    checkpoint_id text NOT NULL,
    task_id       text NOT NULL,
    idx           integer NOT NULL,
    PRIMARY KEY (run_id, checkpoint_ns, checkpoint_id, task_id, idx)
);

-- weft_fence checks a claim inside any statement sequence: it locks the
-- dispatch and raises SQLSTATE WF409 unless it is claimed with p_token and
-- its lease has not expired, or WF499 when p_exclusive and a cancellation
-- was requested; otherwise it returns the requested cancellation ('' none). Sent first in a pipelined batch (one implicit transaction),
-- it makes every later statement of the batch conditional on the fence.
CREATE FUNCTION weft_fence(p_dispatch uuid, p_token uuid, p_exclusive boolean) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v_cancel text;
BEGIN
    SELECT cancel_action INTO v_cancel FROM run_dispatches
    WHERE dispatch_id = p_dispatch AND state = 'claimed' AND claim_token = p_token
      AND lease_expires_at > clock_timestamp()
    FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'dispatch % is fenced', p_dispatch USING ERRCODE = 'WF409';
    END IF;
    IF p_exclusive AND v_cancel IS NOT NULL THEN
        RAISE EXCEPTION 'dispatch % has a cancellation pending', p_dispatch USING ERRCODE = 'WF499';
    END IF;
    RETURN coalesce(v_cancel, '');
END
$$;
