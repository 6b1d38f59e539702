-- Which state channels of a worker's graph its runtime keeps as a
-- LangGraph DeltaChannel (only writes and periodic snapshots stored):
-- {"messages": "delta:messages"} for messagesDeltaReducer, "delta" for
-- another reducer. State reads rebuild the first along the parent chain
-- and mark the second as unresolved (see internal/checkpoints/delta.go).
-- {} when none.
ALTER TABLE graphs ADD COLUMN channel_kinds jsonb NOT NULL DEFAULT '{}';
