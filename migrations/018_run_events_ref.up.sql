-- An event that repeats the values of a checkpoint written in the same
-- commit (values, checkpoints, debug checkpoint) is stored as a reference:
-- ref = {"ns", "id", "path", "keys"} names the checkpoint and which of its
-- channels fill the object at path in data (data holds the rest of the
-- event). Readers render such a row through the checkpoint store (see
-- internal/eventlog); NULL means data is the whole event.
ALTER TABLE run_events ADD COLUMN ref jsonb;
