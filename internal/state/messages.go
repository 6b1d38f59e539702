package state

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/google/uuid"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/messagelog"
	"github.com/weftdev/weft/internal/pregel"
)

// The message log, windows and summaries (DESIGN §5, seeds 001 and 002):
// views of a list channel at a checkpoint that read only the elements they
// show (messagelog.ListView), and summary records beside the checkpoints.

// DefaultLogChannel is the channel the message log and windows read when
// the request names none.
const DefaultLogChannel = "messages"

// MaxLogPage bounds a message log page and a window.
const MaxLogPage = 1000

// MessageRecord is one element of a thread's message log (seed 002's
// MessageRecord).
type MessageRecord struct {
	// Seq is the element's seq: its seq in the thread's element log for a
	// list stored compactly (1 KB or more), its 1-based position for a
	// shorter list (see docs/long-threads.md).
	Seq int64 `json:"seq" validate:"required"`
	// Message is the element (a message, for a messages channel).
	Message json.RawMessage `json:"message" swaggertype:"object" validate:"required"`
	// RunID and Step are the run and step of the checkpoint that first
	// held the element; null when unknown (a short list, update_state
	// outside a run).
	RunID *string `json:"run_id" validate:"required" extensions:"x-nullable"`
	Step  *int    `json:"step" validate:"required" extensions:"x-nullable"`
}

// MessagePage is a page of the message log, newest first.
type MessagePage struct {
	Channel string `json:"channel" validate:"required"`
	// Checkpoint is the checkpoint read (null for a thread without
	// checkpoints).
	Checkpoint *CheckpointRef `json:"checkpoint" validate:"required" extensions:"x-nullable"`
	// Total is the number of elements of the list at the checkpoint.
	Total int `json:"total" validate:"required"`
	// Compact tells that seqs are element-log seqs (false: positions).
	Compact bool            `json:"compact" validate:"required"`
	Records []MessageRecord `json:"records" validate:"required"`
	// NextBefore is the seq to pass as before for the next (older) page;
	// null on the oldest page.
	NextBefore *int64 `json:"next_before" validate:"required" extensions:"x-nullable"`
}

// MessagesParams select a page of the message log.
type MessagesParams struct {
	Channel      string
	CheckpointID string
	// Before is a seq: only elements positioned before the element with
	// this seq (0 = from the newest).
	Before int64
	Limit  int
}

// openList opens channel at cfg through messagelog.ListView, reading the
// value whole only when it is not stored as a value (a delta channel).
func (s *Service) openList(ctx context.Context, cfg checkpoints.Config, channel string, g *graph.Graph) (*messagelog.ListView, error) {
	v, err := messagelog.CheckpointListView(ctx, s.db, cfg, channel)
	if !errors.Is(err, messagelog.ErrListReplay) {
		return v, err
	}
	t, err := checkpoints.GetTuple(ctx, s.db, cfg)
	if err != nil {
		return nil, err
	}
	if err := checkpoints.ResolveDelta(ctx, s.db, []checkpoints.Tuple{*t}, pregel.DeltaKinds(g)); err != nil {
		return nil, err
	}
	return messagelog.ListViewOf(t.Config, channel, t.Checkpoint.ChannelValues[channel])
}

// Messages returns a page of the message log of channel at a checkpoint
// (the thread's latest root checkpoint by default: the current branch),
// newest first. A before seq the list does not hold is a 400.
func (s *Service) Messages(ctx context.Context, threadID uuid.UUID, p MessagesParams) (*MessagePage, error) {
	ref, err := s.threads.LockForState(ctx, s.db, threadID, false)
	if err != nil {
		return nil, err
	}
	g, err := s.readGraph(ctx, ref)
	if err != nil {
		return nil, err
	}
	page := &MessagePage{Channel: p.Channel, Records: []MessageRecord{}}
	v, err := s.openList(ctx, checkpoints.Config{ThreadID: threadID.String(), CheckpointID: p.CheckpointID}, p.Channel, g)
	if apperr.CodeOf(err) == apperr.NotFound && p.CheckpointID == "" {
		return page, nil // no checkpoints yet: an empty log
	}
	if err != nil {
		return nil, err
	}
	page.Checkpoint, page.Total, page.Compact = refOf(v.Config, nil), v.Len(), v.Compact
	end := v.Len()
	if p.Before > 0 {
		if end = v.IndexOf(p.Before); end < 0 {
			return nil, apperr.Errorf(apperr.BadRequest, "Invalid before: seq %d is not in channel %q at checkpoint %s",
				p.Before, p.Channel, v.Config.CheckpointID)
		}
	}
	recs, err := v.Records(ctx, s.db, end-p.Limit, end)
	if err != nil {
		return nil, err
	}
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		page.Records = append(page.Records, MessageRecord{Seq: r.Seq, Message: r.Value, RunID: r.RunID, Step: r.Step})
	}
	if end-p.Limit > 0 && len(recs) > 0 {
		next := recs[0].Seq
		page.NextBefore = &next
	}
	return page, nil
}

// WindowParams ask a state read for a window of a list channel instead of
// its whole value.
type WindowParams struct {
	Channel string
	// K is the number of newest elements shown (1..MaxLogPage).
	K int
	// Summary also returns the summary that goes with the window.
	Summary bool
}

// StateWindow describes the window a windowed state read shows in place of
// a list channel's value.
type StateWindow struct {
	Channel string `json:"channel" validate:"required"`
	// Total is the number of elements of the whole list.
	Total int `json:"total" validate:"required"`
	// Before is the seq of the window's first (oldest) element, the cursor
	// for GET /threads/{id}/messages?before= (null for an empty window).
	Before *int64 `json:"before" validate:"required" extensions:"x-nullable"`
	// Seqs are the seqs of the window's elements, oldest first.
	Seqs []int64 `json:"seqs" validate:"required"`
	// Compact tells that seqs are element-log seqs (false: positions).
	Compact bool `json:"compact" validate:"required"`
	// Summary is, when the read asked for it (summary=true), the widest
	// summary of the channel that ends before the window; null when there
	// is none or it was not asked for.
	Summary *SummaryRecord `json:"summary" validate:"required" extensions:"x-nullable"`
}

// window replaces the value of w.Channel in t (read without it, see
// checkpoints.GetTupleWithout) by its last w.K elements,
// resolves t's other delta channels, and describes the window.
func (s *Service) window(ctx context.Context, t *checkpoints.Tuple, g *graph.Graph, w WindowParams) (*checkpoints.Tuple, *StateWindow, error) {
	kinds := pregel.DeltaKinds(g)
	var v *messagelog.ListView
	var err error
	_, isDelta := checkpoints.DeltaChannels(t, kinds)[w.Channel]
	if !isDelta {
		v, err = messagelog.TupleListView(ctx, s.db, t, w.Channel)
	}
	_, present := t.Checkpoint.ChannelValues[w.Channel]
	present = present || t.Checkpoint.ChannelVersions[w.Channel] != ""
	if isDelta || errors.Is(err, messagelog.ErrListReplay) {
		// Not stored as a value: read the checkpoint whole.
		if t, err = checkpoints.GetTuple(ctx, s.db, t.Config); err != nil {
			return nil, nil, err
		}
		if err := checkpoints.ResolveDelta(ctx, s.db, []checkpoints.Tuple{*t}, kinds); err != nil {
			return nil, nil, err
		}
		_, present = t.Checkpoint.ChannelValues[w.Channel]
		v, err = messagelog.ListViewOf(t.Config, w.Channel, t.Checkpoint.ChannelValues[w.Channel])
	} else if err == nil {
		err = checkpoints.ResolveDelta(ctx, s.db, []checkpoints.Tuple{*t}, kinds)
	}
	if err != nil {
		return nil, nil, err
	}
	recs, err := v.Records(ctx, s.db, v.Len()-w.K, v.Len())
	if err != nil {
		return nil, nil, err
	}
	sw := &StateWindow{Channel: w.Channel, Total: v.Len(), Compact: v.Compact, Seqs: make([]int64, len(recs))}
	var b strings.Builder
	b.WriteByte('[')
	for i, r := range recs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(r.Value)
		sw.Seqs[i] = r.Seq
	}
	b.WriteByte(']')
	if present {
		t.Checkpoint.ChannelValues[w.Channel] = json.RawMessage(b.String())
	}
	if len(recs) > 0 {
		first := recs[0].Seq
		sw.Before = &first
	}
	if w.Summary {
		if sw.Summary, err = s.windowSummary(ctx, t.Config.ThreadID, w.Channel, sw.Before); err != nil {
			return nil, nil, err
		}
	}
	return t, sw, nil
}

func (s *Service) windowSummary(ctx context.Context, threadID, channel string, before *int64) (*SummaryRecord, error) {
	var b int64
	if before != nil {
		b = *before
	}
	if b == 1 {
		return nil, nil // nothing precedes the window
	}
	sum, err := messagelog.SummaryBefore(ctx, s.db, threadID, channel, b)
	if err != nil || sum == nil {
		return nil, err
	}
	return summaryRecord(sum), nil
}

// emptyWindow is the window of a thread without checkpoints.
func (s *Service) emptyWindow(ctx context.Context, threadID uuid.UUID, w WindowParams) (*StateWindow, error) {
	sw := &StateWindow{Channel: w.Channel, Seqs: []int64{}}
	if w.Summary {
		var err error
		if sw.Summary, err = s.windowSummary(ctx, threadID.String(), w.Channel, nil); err != nil {
			return nil, err
		}
	}
	return sw, nil
}

// SummaryRecord is a summary as the API shows it.
type SummaryRecord struct {
	SummaryID int64  `json:"summary_id" validate:"required"`
	ThreadID  string `json:"thread_id" validate:"required"`
	Channel   string `json:"channel" validate:"required"`
	// FromSeq and ToSeq are the inclusive seq range the summary covers.
	FromSeq   int64           `json:"from_seq" validate:"required"`
	ToSeq     int64           `json:"to_seq" validate:"required"`
	Summary   json.RawMessage `json:"summary" swaggertype:"object" validate:"required"`
	CreatedAt httpx.Time      `json:"created_at" validate:"required" swaggertype:"string" format:"date-time"`
}

func summaryRecord(s *messagelog.Summary) *SummaryRecord {
	return &SummaryRecord{SummaryID: s.ID, ThreadID: s.ThreadID, Channel: s.Channel, FromSeq: s.FromSeq, ToSeq: s.ToSeq,
		Summary: s.Summary, CreatedAt: httpx.Time{Time: s.CreatedAt}}
}

// SummaryParams are the fields of a new summary.
type SummaryParams struct {
	Channel        string
	FromSeq, ToSeq int64
	Summary        json.RawMessage
}

// AddSummary stores a summary of the thread's channel. The range must lie
// within the seqs the thread has handed out (its element log's, or the
// current list's length for a short list): 400 otherwise. A summary of
// the same range exists: 409. A busy thread is no obstacle (a summary is
// not state: a running graph's node may store one).
func (s *Service) AddSummary(ctx context.Context, threadID uuid.UUID, p SummaryParams) (*SummaryRecord, error) {
	if p.FromSeq < 1 || p.ToSeq < p.FromSeq {
		return nil, apperr.Errorf(apperr.BadRequest, "Invalid range %d..%d: need 1 <= from_seq <= to_seq", p.FromSeq, p.ToSeq)
	}
	ref, err := s.threads.LockForState(ctx, s.db, threadID, false)
	if err != nil {
		return nil, err
	}
	g, err := s.readGraph(ctx, ref)
	if err != nil {
		return nil, err
	}
	bound, err := messagelog.ElementSeqsLast(ctx, s.db, threadID.String())
	if err != nil {
		return nil, err
	}
	v, err := s.openList(ctx, checkpoints.Config{ThreadID: threadID.String()}, p.Channel, g)
	switch {
	case apperr.CodeOf(err) == apperr.NotFound:
	case err != nil:
		return nil, err
	case !v.Compact:
		bound = max(bound, int64(v.Len()))
	}
	if p.ToSeq > bound {
		return nil, apperr.Errorf(apperr.BadRequest, "Invalid range %d..%d: thread %s has seqs up to %d in channel %q",
			p.FromSeq, p.ToSeq, threadID, bound, p.Channel)
	}
	sum, err := messagelog.SummaryAdd(ctx, s.db, messagelog.Summary{ThreadID: threadID.String(), Channel: p.Channel,
		FromSeq: p.FromSeq, ToSeq: p.ToSeq, Summary: p.Summary})
	if err != nil {
		return nil, err
	}
	return summaryRecord(sum), nil
}

// Summaries lists the thread's summaries matching f, widest first.
func (s *Service) Summaries(ctx context.Context, threadID uuid.UUID, f messagelog.SummaryFilter) ([]SummaryRecord, error) {
	if _, err := s.threads.LockForState(ctx, s.db, threadID, false); err != nil {
		return nil, err
	}
	list, err := messagelog.SummaryList(ctx, s.db, threadID.String(), f)
	if err != nil {
		return nil, err
	}
	out := make([]SummaryRecord, len(list))
	for i := range list {
		out[i] = *summaryRecord(&list[i])
	}
	return out, nil
}

// DeleteSummary deletes one summary of the thread (404 when missing).
func (s *Service) DeleteSummary(ctx context.Context, threadID uuid.UUID, id int64) error {
	if _, err := s.threads.LockForState(ctx, s.db, threadID, false); err != nil {
		return err
	}
	return messagelog.SummaryDelete(ctx, s.db, threadID.String(), id)
}
