package state

import (
	"context"
	"net/http"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/httpx"
)

// ThreadStorage is the body of GET /threads/{thread_id}/storage: the bytes
// a thread's checkpoints occupy, as stored, in the shape of LangGraph's
// ThreadStorage.
type ThreadStorage struct {
	ThreadID uuid.UUID `json:"thread_id" validate:"required" format:"uuid"`
	// TotalBytes is the sum of the three sections.
	TotalBytes int64 `json:"total_bytes" validate:"required"`
	// Checkpoints are the checkpoint rows (checkpoint and metadata, with
	// the metadata Weft keeps once per thread).
	Checkpoints StorageUsage `json:"checkpoints" validate:"required"`
	// ChannelValues are the stored channel values, one per channel
	// version.
	ChannelValues ChannelValuesUsage `json:"channel_values" validate:"required"`
	// PendingWrites are the tasks' writes not folded into a checkpoint.
	PendingWrites StorageUsage `json:"pending_writes" validate:"required"`
}

// StorageUsage is a count of rows and their bytes.
type StorageUsage struct {
	Count int64 `json:"count" validate:"required"`
	Bytes int64 `json:"bytes" validate:"required"`
}

// ChannelValuesUsage is the stored channel values: their count and bytes,
// and per channel its versions and their bytes.
type ChannelValuesUsage struct {
	Count     int64                                 `json:"count" validate:"required"`
	Bytes     int64                                 `json:"bytes" validate:"required"`
	ByChannel map[string]checkpoints.ChannelStorage `json:"by_channel" validate:"required"`
}

// Storage measures thread id's checkpoints (404 when the caller has no
// such thread).
func (s *Service) Storage(ctx context.Context, id uuid.UUID) (*ThreadStorage, error) {
	if _, err := s.threads.LockForState(ctx, s.db, id, false); err != nil {
		return nil, err
	}
	st, err := checkpoints.ThreadStorage(ctx, s.db, id.String())
	if err != nil {
		return nil, err
	}
	out := &ThreadStorage{ThreadID: id,
		Checkpoints:   StorageUsage{Count: st.CheckpointCount, Bytes: st.CheckpointBytes},
		ChannelValues: ChannelValuesUsage{Count: st.ChannelCount(), Bytes: st.ChannelBytes(), ByChannel: st.Channels},
		PendingWrites: StorageUsage{Count: st.WriteCount, Bytes: st.WriteBytes}}
	if out.ChannelValues.ByChannel == nil {
		out.ChannelValues.ByChannel = map[string]checkpoints.ChannelStorage{}
	}
	out.TotalBytes = out.Checkpoints.Bytes + out.ChannelValues.Bytes + out.PendingWrites.Bytes
	return out, nil
}

// GetStorage godoc
//
//	@Summary		Bytes a thread's checkpoints occupy
//	@ID				get_thread_storage
//	@Description	What the thread's checkpoints occupy as stored, in every namespace (LangGraph's ThreadStorage): the checkpoint rows (checkpoint and metadata, with the metadata Weft keeps once per thread), the channel values (one per channel version; by_channel per channel; a long list stored per element counts the elements of the thread's element log its versions name) and the pending writes, and their total. Bytes are what PostgreSQL stores (pg_column_size, after compression; no row headers or indexes). Reads every checkpoint row of the thread. GET /inspect/threads/storage measures several threads by table.
//	@Tags			threads
//	@Produce		json
//	@Param			thread_id	path		string	true	"Thread ID"	format(uuid)
//	@Success		200			{object}	ThreadStorage
//	@Failure		404			{object}	httpx.ErrorBody
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/threads/{thread_id}/storage [get]
func (h *Handlers) GetStorage(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	out, err := h.svc.Storage(r.Context(), id)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}
