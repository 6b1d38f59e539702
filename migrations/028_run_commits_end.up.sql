-- A run's end records its commit key without the result (issue 29): once
-- the run has ended nothing in that answer changes (its events, its
-- dispatch's cancellation; the checkpoint ids are the replayed request's
-- own), so a replay of the end makes it again. An ended run keeps only its
-- end's key (the others go at the end), about 60 bytes a run on a thread.
ALTER TABLE run_commits ALTER COLUMN result DROP NOT NULL;
