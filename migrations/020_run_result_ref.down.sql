-- Results stored as references cannot be rendered in SQL (their values
-- live in the checkpoint store's encoding): refuse rather than lose them.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM runs WHERE result_ref IS NOT NULL) THEN
        RAISE EXCEPTION 'runs holds results stored as checkpoint references; '
            'delete those runs before migrating below 20';
    END IF;
END $$;
ALTER TABLE runs DROP COLUMN result_ref;
