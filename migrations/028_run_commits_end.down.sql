-- An end's key gets the answer a replay would make (without checkpoint
-- ids: the down cannot know the request's).
UPDATE run_commits c SET result = jsonb_build_object('checkpoint_ids', '[]'::jsonb,
    'last_seq', (SELECT coalesce(max(e.seq), 0) FROM run_events e WHERE e.run_id = c.run_id),
    'cancel', coalesce((SELECT d.cancel_action FROM run_dispatches d WHERE d.run_id = c.run_id
        ORDER BY d.created_at DESC LIMIT 1), ''))
WHERE result IS NULL;
ALTER TABLE run_commits ALTER COLUMN result SET NOT NULL;
