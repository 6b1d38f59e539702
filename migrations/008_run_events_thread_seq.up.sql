-- Protocol v2 streams (POST /threads/{thread_id}/stream/events) number a
-- thread's events with one integer that a client resumes from. A run's seq
-- restarts at 1, and (created_at, run_id, seq) is not an integer, so every
-- event also takes a number from one sequence: it only grows, is never
-- reused (a deleted or rolled-back run leaves a gap, not a repeat), and
-- within a thread follows the order events were written (one writer per
-- thread: at most one claimed dispatch, and a run's commits go one after
-- the other), so it is the thread's event order. Rows appended without the
-- column (the commit coordinator's insert) take it from the default.
CREATE SEQUENCE run_events_thread_seq AS bigint;

ALTER TABLE run_events ADD COLUMN thread_seq bigint;

UPDATE run_events e SET thread_seq = o.n
FROM (SELECT run_id, seq, row_number() OVER (ORDER BY created_at, run_id, seq) AS n FROM run_events) o
WHERE e.run_id = o.run_id AND e.seq = o.seq;

SELECT setval('run_events_thread_seq', coalesce((SELECT max(thread_seq) FROM run_events), 0) + 1, false);

ALTER TABLE run_events
    ALTER COLUMN thread_seq SET DEFAULT nextval('run_events_thread_seq'),
    ALTER COLUMN thread_seq SET NOT NULL;
ALTER SEQUENCE run_events_thread_seq OWNED BY run_events.thread_seq;

CREATE INDEX run_events_thread_seq_idx ON run_events (thread_id, thread_seq);
