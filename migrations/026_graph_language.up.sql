-- The language of a worker's graph: 'python' for graphs the Python worker
-- serves (Python LangGraph's task ids, xxh3-128), '' for LangGraph.js and
-- built-in graphs (UUIDv5 task ids). See internal/pregel TaskID.
ALTER TABLE graphs ADD COLUMN language text NOT NULL DEFAULT '';
