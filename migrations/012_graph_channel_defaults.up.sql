-- What each state channel of a graph reads as while unset (its default:
-- [] for a list with a reducer, a constant, …), as the graph's own runtime
-- defines it. Weft has no definition of a worker's graph, so state reads
-- show these defaults from the catalog, as LangGraph's getState and
-- getStateHistory do (see internal/workerapi). {} when none.
ALTER TABLE graphs ADD COLUMN channel_defaults jsonb NOT NULL DEFAULT '{}';
