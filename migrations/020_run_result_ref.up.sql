-- A run's result (its final values) that repeats the values of a
-- checkpoint written by the run's last commit is stored as a reference, as
-- run_events does (migration 018): result_ref = {"ns", "id", "path": [],
-- "keys"} names the checkpoint and the channels that fill the result
-- object, and result holds the rest. Readers render it through the
-- checkpoint store (internal/eventlog); NULL means result is whole.
ALTER TABLE runs ADD COLUMN result_ref jsonb;
