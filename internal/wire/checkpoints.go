package wire

// Checkpoint reads for external workers. A worker's checkpointer (the JS
// worker's WeftSaver) reads the rows exactly as stored, blobs undecoded,
// the way LangGraph's own PostgresSaver reads them: its serializer then
// revives the values (LangChain messages as message classes), so LangGraph's
// loop resumes from what it wrote, pending writes included.

// RawTuple is one checkpoint as stored, for a worker's checkpointer.
type RawTuple struct {
	Config struct {
		ThreadID     string `json:"thread_id"`
		NS           string `json:"checkpoint_ns"`
		CheckpointID string `json:"checkpoint_id"`
	} `json:"config"`
	ParentCheckpointID *string `json:"parent_checkpoint_id" validate:"required" extensions:"x-nullable"`
	// Checkpoint is the checkpoints.checkpoint column (without
	// channel_values).
	Checkpoint map[string]any `json:"checkpoint" validate:"required" swaggertype:"object"`
	// Metadata is the checkpoints.metadata column.
	Metadata map[string]any `json:"metadata" validate:"required" swaggertype:"object"`
	// ChannelValues are the blobs named by the checkpoint's
	// channel_versions: [channel, type, base64 blob or null].
	ChannelValues [][]any `json:"channel_values" validate:"required" swaggertype:"array,string"`
	// PendingWrites are the writes recorded under the checkpoint, ordered
	// by task path, task id, idx: [task_id, channel, type, base64 blob].
	PendingWrites [][]any `json:"pending_writes" validate:"required" swaggertype:"array,string"`
}

// CheckpointReadRequest is the body of POST /dispatch/checkpoints/get and
// /dispatch/checkpoints/list.
type CheckpointReadRequest struct {
	ThreadID string `json:"thread_id" validate:"required" minLength:"1" maxLength:"200" example:"5b2a0c1e-8d47-4a4e-9b1c-9a4f2f0b1d11"`
	// CheckpointNS selects a namespace ("" is the root graph); absent or
	// null: every namespace (list only; get reads the root).
	CheckpointNS *string `json:"checkpoint_ns"`
	// CheckpointID reads that checkpoint (get) or only it (list); empty:
	// the latest (get) or all (list).
	CheckpointID string `json:"checkpoint_id" maxLength:"200"`
	// Before lists checkpoints older than this id (list).
	Before string `json:"before" maxLength:"200"`
	// Filter lists checkpoints whose metadata contains it (list).
	Filter map[string]any `json:"filter"`
	// Limit caps the list (1..1000; absent or 0: 100; get ignores it).
	Limit int `json:"limit" minimum:"0" maximum:"1000"`
}

// DeltaHistoryRequest is the body of POST /dispatch/checkpoints/delta-history.
type DeltaHistoryRequest struct {
	ThreadID string `json:"thread_id" validate:"required" minLength:"1" maxLength:"200" example:"5b2a0c1e-8d47-4a4e-9b1c-9a4f2f0b1d11"`
	// CheckpointNS is the namespace ("" is the root graph).
	CheckpointNS string `json:"checkpoint_ns" maxLength:"1000"`
	// CheckpointID is the checkpoint whose ancestors are walked; empty:
	// the latest of the namespace.
	CheckpointID string `json:"checkpoint_id" maxLength:"200"`
	// Channels are the delta channels to walk for (at most 100).
	Channels []string `json:"channels" validate:"max=100" example:"messages"`
}

// RawDeltaHistory is one channel's history as stored: Writes oldest first,
// each [task_id, channel, type, base64 blob]; Seed [type, base64 blob]
// when the walk stopped at a stored value (a DeltaSnapshot or a plain
// value), absent when it reached the root.
type RawDeltaHistory struct {
	Seed   []any   `json:"seed,omitempty" swaggertype:"array,string"`
	Writes [][]any `json:"writes" validate:"required" swaggertype:"array,string"`
}
