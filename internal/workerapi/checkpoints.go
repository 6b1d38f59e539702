package workerapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/wire"
)

// Checkpoint reads for external workers. A worker's checkpointer (the JS
// worker's WeftSaver) reads the rows exactly as stored, blobs undecoded,
// the way LangGraph's own PostgresSaver reads them: its serializer then
// revives the values (LangChain messages as message classes), so LangGraph's
// loop resumes from what it wrote, pending writes included. State reads for
// clients (GET /threads/{id}/state) decode and normalise the same rows.

// rawTupleSQL builds each checkpoint's RawTuple as one jsonb document: its
// row, its blobs (found through channel_versions) and its writes.
const rawTupleSQL = `SELECT jsonb_build_object(
	'config', jsonb_build_object('thread_id', c.thread_id, 'checkpoint_ns', c.checkpoint_ns, 'checkpoint_id', c.checkpoint_id),
	'parent_checkpoint_id', c.parent_checkpoint_id,
	'checkpoint', c.checkpoint,
	'metadata', weft_checkpoint_metadata(c.thread_id, c.metadata),
	'channel_values', (SELECT coalesce(jsonb_agg(jsonb_build_array(b.channel, weft_blob_type(b.type), translate(encode(weft_blob(b.thread_id, b.type, b.blob), 'base64'), E'\n', ''))), '[]'::jsonb)
		FROM jsonb_each_text(c.checkpoint -> 'channel_versions') v
		JOIN checkpoint_blobs b ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
			AND b.channel = v.key AND b.version = v.value),
	'pending_writes', (SELECT coalesce(jsonb_agg(jsonb_build_array(w.task_id, w.channel, w.type, translate(encode(w.blob, 'base64'), E'\n', ''))
			ORDER BY w.task_path, w.task_id, w.idx), '[]'::jsonb)
		FROM checkpoint_writes w WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns
			AND w.checkpoint_id = c.checkpoint_id))
FROM checkpoints c
WHERE c.thread_id = $1 AND ($2::text IS NULL OR c.checkpoint_ns = $2)
  AND ($3 = '' OR c.checkpoint_id = $3) AND ($4 = '' OR c.checkpoint_id < $4)
  AND ($5::jsonb IS NULL OR c.metadata @> $5::jsonb OR weft_checkpoint_metadata(c.thread_id, c.metadata) @> $5::jsonb)
ORDER BY c.checkpoint_id DESC LIMIT $6`

// CheckpointRawList returns the stored checkpoints of a thread matching
// req, newest first, as RawTuple JSON documents.
func CheckpointRawList(ctx context.Context, db postgres.DBTX, req *wire.CheckpointReadRequest, limit int) ([]json.RawMessage, error) {
	var filter []byte
	if req.Filter != nil {
		filter = jsonv.Must(req.Filter)
	}
	rows, err := db.Query(ctx, rawTupleSQL, req.ThreadID, req.CheckpointNS, req.CheckpointID, req.Before, filter, limit)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[json.RawMessage])
	if err != nil || crypt.FromContext(ctx) == nil {
		return out, err
	}
	for i, raw := range out {
		if out[i], err = openRawTuple(ctx, raw); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// openRawTuple decrypts the blobs of a RawTuple document (encryption is at
// rest: a worker gets the plaintext types and bytes, as without it).
func openRawTuple(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	for _, field := range []string{"channel_values", "pending_writes"} {
		var entries [][]any
		if err := json.Unmarshal(doc[field], &entries); err != nil {
			return nil, fmt.Errorf("raw tuple %s: %w", field, err)
		}
		for _, e := range entries {
			// [channel, type, blob] or [task_id, channel, type, blob]
			ti := len(e) - 2
			if ti < 0 {
				continue
			}
			if typ, _ := e[ti].(string); !crypt.Encrypted(typ) {
				continue
			}
			typ := e[ti].(string)
			b64text, _ := e[ti+1].(string)
			data, err := base64.StdEncoding.DecodeString(b64text)
			if err != nil {
				return nil, fmt.Errorf("raw tuple %s: %w", field, err)
			}
			v, err := checkpoints.OpenStored(ctx, checkpoints.StoredValue{Type: typ, Data: data})
			if err != nil {
				return nil, fmt.Errorf("raw tuple %s: %w", field, err)
			}
			e[ti], e[ti+1] = v.Type, b64(v.Data)
		}
		doc[field] = jsonv.Must(entries)
	}
	return jsonv.Must(doc), nil
}

func (h *Handlers) checkpointRead(r *http.Request) (*wire.CheckpointReadRequest, error) {
	var req wire.CheckpointReadRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return nil, err
	}
	if req.ThreadID == "" || utf8.RuneCountInString(req.ThreadID) > 200 {
		return nil, apperr.Errorf(apperr.Invalid, "thread_id is required (at most 200 characters)")
	}
	for name, v := range map[string]string{"checkpoint_id": req.CheckpointID, "before": req.Before} {
		if utf8.RuneCountInString(v) > 200 {
			return nil, apperr.Errorf(apperr.Invalid, "Invalid %s: at most 200 characters", name)
		}
	}
	return &req, nil
}

// GetCheckpointRaw godoc
//
//	@Summary		Read a checkpoint as stored (worker API)
//	@ID				get_checkpoint_raw
//	@Description	A worker checkpointer's getTuple: the checkpoint (the latest of checkpoint_ns, default the root, when checkpoint_id is empty) with its metadata, parent, channel blobs and pending writes exactly as stored (blobs base64, with their serializer type), for the worker's own serializer to decode. 404 when there is none.
//	@Tags			worker
//	@Accept			json
//	@Produce		json
//	@Param			body	body		wire.CheckpointReadRequest	true	"Which checkpoint"
//	@Success		200		{object}	wire.RawTuple
//	@Failure		404		{object}	httpx.ErrorBody
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/dispatch/checkpoints/get [post]
func (h *Handlers) GetCheckpointRaw(w http.ResponseWriter, r *http.Request) error {
	req, err := h.checkpointRead(r)
	if err != nil {
		return err
	}
	if req.CheckpointNS == nil {
		root := ""
		req.CheckpointNS = &root
	}
	req.Before, req.Filter = "", nil
	got, err := CheckpointRawList(r.Context(), h.db, req, 1)
	if err != nil {
		return err
	}
	if len(got) == 0 {
		return apperr.Errorf(apperr.NotFound, "No checkpoint %q in namespace %q of thread %s", req.CheckpointID, *req.CheckpointNS, req.ThreadID)
	}
	httpx.WriteJSON(w, http.StatusOK, got[0])
	return nil
}

// ListCheckpointsRaw godoc
//
//	@Summary		List checkpoints as stored (worker API)
//	@ID				list_checkpoints_raw
//	@Description	A worker checkpointer's list: the thread's checkpoints newest first (of checkpoint_ns when given, before an id, with metadata containing filter, at most limit), each as POST /dispatch/checkpoints/get returns one.
//	@Tags			worker
//	@Accept			json
//	@Produce		json
//	@Param			body	body		wire.CheckpointReadRequest	true	"Which checkpoints"
//	@Success		200		{array}		wire.RawTuple
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/dispatch/checkpoints/list [post]
func (h *Handlers) ListCheckpointsRaw(w http.ResponseWriter, r *http.Request) error {
	req, err := h.checkpointRead(r)
	if err != nil {
		return err
	}
	if req.Limit == 0 {
		req.Limit = 100
	}
	if req.Limit < 1 || req.Limit > 1000 {
		return apperr.Errorf(apperr.Invalid, "Invalid limit: must be 1..1000")
	}
	got, err := CheckpointRawList(r.Context(), h.db, req, req.Limit)
	if err != nil {
		return err
	}
	if got == nil {
		got = []json.RawMessage{}
	}
	httpx.WriteJSON(w, http.StatusOK, got)
	return nil
}

// GetDeltaHistory godoc
//
//	@Summary		Read delta channels' histories (worker API)
//	@ID				get_delta_history
//	@Description	A worker checkpointer's getDeltaChannelHistory (LangGraph's DeltaChannel) in one request: for each channel, the walk starts at the parent of the checkpoint (the latest of checkpoint_ns when checkpoint_id is empty) and goes up the parent chain, collecting each ancestor's writes to the channel, and stops after the first ancestor that stores a value for it (a DeltaSnapshot, or a plain value), which is the seed. Writes come oldest first, each checkpoint's in (task_path, task_id, idx) order, as stored (base64, with their serializer type). Two queries whatever the chain's length. An unknown checkpoint gives empty histories.
//	@Tags			worker
//	@Accept			json
//	@Produce		json
//	@Param			body	body		wire.DeltaHistoryRequest	true	"Which checkpoint and channels"
//	@Success		200		{object}	map[string]wire.RawDeltaHistory
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/dispatch/checkpoints/delta-history [post]
func (h *Handlers) GetDeltaHistory(w http.ResponseWriter, r *http.Request) error {
	var req wire.DeltaHistoryRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.ThreadID == "" || utf8.RuneCountInString(req.ThreadID) > 200 {
		return apperr.Errorf(apperr.Invalid, "thread_id is required (at most 200 characters)")
	}
	if utf8.RuneCountInString(req.CheckpointID) > 200 || utf8.RuneCountInString(req.CheckpointNS) > 1000 {
		return apperr.Errorf(apperr.Invalid, "Invalid checkpoint_id or checkpoint_ns: too long")
	}
	if len(req.Channels) > 100 {
		return apperr.Errorf(apperr.Invalid, "Invalid channels: at most 100")
	}
	hist, err := checkpoints.ReadDeltaHistory(r.Context(), h.db,
		checkpoints.Config{ThreadID: req.ThreadID, NS: req.CheckpointNS, CheckpointID: req.CheckpointID}, req.Channels)
	if err != nil {
		return err
	}
	out := make(map[string]wire.RawDeltaHistory, len(hist))
	for ch, hh := range hist {
		rh := wire.RawDeltaHistory{Writes: make([][]any, 0, len(hh.Writes))}
		if hh.Seed != nil {
			rh.Seed = []any{hh.Seed.Type, b64(hh.Seed.Data)}
		}
		for _, w := range hh.Writes {
			rh.Writes = append(rh.Writes, []any{w.TaskID, w.Channel, w.Value.Type, b64(w.Value.Data)})
		}
		out[ch] = rh
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// b64 is a blob as the raw reads send it (null for none).
func b64(data []byte) any {
	if data == nil {
		return nil
	}
	return base64.StdEncoding.EncodeToString(data)
}
