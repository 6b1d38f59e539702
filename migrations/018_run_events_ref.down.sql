-- Events stored as references cannot be rendered in SQL (their values live
-- in the checkpoint store's encoding): refuse rather than lose them.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM run_events WHERE ref IS NOT NULL) THEN
        RAISE EXCEPTION 'run_events holds events stored as checkpoint references; '
            'delete them (or the runs) before migrating below 18';
    END IF;
END $$;
ALTER TABLE run_events DROP COLUMN ref;
