package checkpoints

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/weftdev/weft/internal/checkpoints/metabase"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/wire"
)

// Config addresses a checkpoint: a thread, a namespace within it ("" is the
// root graph; subgraphs use "node:task_id" paths) and a checkpoint id. An
// empty CheckpointID means "the latest" where a read accepts it, and "no
// parent" when passed to Put.
type Config struct {
	ThreadID     string `json:"thread_id"`
	NS           string `json:"checkpoint_ns"`
	CheckpointID string `json:"checkpoint_id"`
}

// Checkpoint is LangGraph's checkpoint object, format v4 (the worker
// protocol carries it whole, so its shape is package wire's).
type Checkpoint = wire.Checkpoint

// Metadata is a checkpoint's metadata (wire.Metadata).
type Metadata = wire.Metadata

// Write is one pending write of a task (wire.Write).
type Write = wire.Write

// Tuple is a checkpoint as read back: where it is, its content, its
// metadata, its parent (nil for a thread's first checkpoint) and the pending
// writes recorded under it, ordered by task path, task id, idx.
type Tuple struct {
	Config        Config
	Checkpoint    Checkpoint
	Metadata      Metadata
	Parent        *Config
	PendingWrites []Write

	// verbatim holds the channel values a read found to be JSON text in
	// encoding/json's output form (see Verbatim).
	verbatim map[string]json.RawMessage
	// asStored holds the channel values a read took unchanged from their
	// blob rows (see AsStored).
	asStored map[string]json.RawMessage
}

// Verbatim reports whether v, the value of channel ch, is JSON text this
// tuple's read found valid and in encoding/json's output form
// (jsonv.Canonical): a response may copy it as it is, without
// json.Marshal's scan. A value replaced since the read (anything but the
// same bytes) is not.
func (t *Tuple) Verbatim(ch string, v any) bool {
	raw, ok := v.(json.RawMessage)
	read, found := t.verbatim[ch]
	return ok && found && len(raw) > 0 && len(raw) == len(read) && &raw[0] == &read[0]
}

func (t *Tuple) markVerbatim(ch string, v json.RawMessage) {
	if t.verbatim == nil {
		t.verbatim = map[string]json.RawMessage{}
	}
	t.verbatim[ch] = v
}

// AsStored reports whether v, the value of channel ch, is the JSON text this
// tuple's read took unchanged from the channel's blob row: a plaintext
// "json" row as it is, or a weft_list row's list as weft_blob() rebuilds
// it, without LangChain envelopes to normalise. SQL reading that row then
// finds the same JSON (a thread's projection may reference it). A value
// replaced since the read (anything but the same bytes) is not.
func (t *Tuple) AsStored(ch string, v any) bool {
	raw, ok := v.(json.RawMessage)
	read, found := t.asStored[ch]
	return ok && found && len(raw) > 0 && len(raw) == len(read) && &raw[0] == &read[0]
}

// StoredVersions returns the channels of cp whose value is one that read
// took unchanged from its blob row in the root namespace (read.AsStored) at
// the version cp has for it, with that version: the blob rows whose JSON is
// exactly cp's values for those channels. cp may be read's checkpoint or
// one made from it.
func StoredVersions(read *Tuple, cp *Checkpoint) map[string]string {
	if read == nil || read.Config.NS != "" {
		return nil
	}
	var out map[string]string
	for ch, v := range cp.ChannelValues {
		ver, ok := cp.ChannelVersions[ch]
		if !ok || ver != read.Checkpoint.ChannelVersions[ch] || !read.AsStored(ch, v) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[ch] = ver
	}
	return out
}

// WrittenVersions are the blob rows a put of cp with newVersions writes,
// channel → version: its new versions that have a value (Put
// writes no row for the others).
func WrittenVersions(cp *Checkpoint, newVersions map[string]string) map[string]string {
	out := make(map[string]string, len(newVersions))
	for ch, ver := range newVersions {
		if _, ok := cp.ChannelValues[ch]; ok {
			out[ch] = ver
		}
	}
	return out
}

func (t *Tuple) markAsStored(ch string, v json.RawMessage) {
	if t.asStored == nil {
		t.asStored = map[string]json.RawMessage{}
	}
	t.asStored[ch] = v
}

// Special channels whose writes use fixed negative indexes, so that writing
// them again replaces the row instead of being ignored.
const (
	ChannelError     = "__error__"
	ChannelScheduled = "__scheduled__"
	ChannelInterrupt = "__interrupt__"
	ChannelResume    = "__resume__"
)

var specialIdx = map[string]int{
	ChannelError:     -1,
	ChannelScheduled: -2,
	ChannelInterrupt: -3,
	ChannelResume:    -4,
}

// WriteIdx returns the idx stored for a write: the special channel's fixed
// index (__error__ -1, __scheduled__ -2, __interrupt__ -3, __resume__ -4),
// or idx itself for any other channel. The bool reports a special channel.
func WriteIdx(channel string, idx int) (int, bool) {
	if s, ok := specialIdx[channel]; ok {
		return s, true
	}
	return idx, false
}

// storedCheckpoint is the jsonb column as Weft writes it: the checkpoint
// without channel_values.
type storedCheckpoint struct {
	V               int                       `json:"v"`
	ID              string                    `json:"id"`
	TS              string                    `json:"ts"`
	ChannelVersions map[string]any            `json:"channel_versions"`
	VersionsSeen    map[string]map[string]any `json:"versions_seen"`
	UpdatedChannels []string                  `json:"updated_channels,omitempty"`
}

func encodeCheckpoint(cp Checkpoint) ([]byte, error) {
	s := storedCheckpoint{
		V: cp.V, ID: cp.ID, TS: cp.TS,
		ChannelVersions: storedVersions(cp.ChannelVersions),
		VersionsSeen:    make(map[string]map[string]any, len(cp.VersionsSeen)),
		UpdatedChannels: cp.UpdatedChannels,
	}
	for node, seen := range cp.VersionsSeen {
		s.VersionsSeen[node] = storedVersions(seen)
	}
	return json.Marshal(s)
}

// storedVersions renders versions for the jsonb column: an integer version
// (the JS saver's scheme, "3") as a JSON number, as the JS saver writes it
// and as its getNextVersion requires; any other version as a string.
func storedVersions(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if IsIntVersion(v) {
			out[k] = json.Number(v)
		} else {
			out[k] = v
		}
	}
	return out
}

// IsIntVersion reports whether v is an integer version (the JS saver's
// scheme): digits only, no leading zero.
func IsIntVersion(v string) bool {
	if v == "" || len(v) > 18 || (v[0] == '0' && len(v) > 1) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// readCheckpoint is the jsonb column as any saver may have written it.
type readCheckpoint struct {
	V               int                       `json:"v"`
	ID              string                    `json:"id"`
	TS              string                    `json:"ts"`
	ChannelValues   map[string]any            `json:"channel_values"`
	ChannelVersions map[string]any            `json:"channel_versions"`
	VersionsSeen    map[string]map[string]any `json:"versions_seen"`
	UpdatedChannels []string                  `json:"updated_channels"`
}

// decodeCheckpoint parses the jsonb column. ChannelValues holds only the
// inline (Python) values; the caller adds the blobs.
func decodeCheckpoint(data []byte) (Checkpoint, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var r readCheckpoint
	if err := dec.Decode(&r); err != nil {
		return Checkpoint{}, fmt.Errorf("decode checkpoint: %w", err)
	}
	cp := Checkpoint{
		V: r.V, ID: r.ID, TS: r.TS,
		ChannelValues:   make(map[string]any, len(r.ChannelVersions)),
		ChannelVersions: versionMap(r.ChannelVersions),
		VersionsSeen:    make(map[string]map[string]string, len(r.VersionsSeen)),
		UpdatedChannels: r.UpdatedChannels,
	}
	for k, v := range r.ChannelValues {
		cp.ChannelValues[k] = v
	}
	for node, seen := range r.VersionsSeen {
		cp.VersionsSeen[node] = versionMap(seen)
	}
	return cp, nil
}

// versionMap renders versions as text the way PostgreSQL's jsonb_each_text
// does, which is how checkpoint_blobs.version is keyed: JSON strings
// unquoted, JSON numbers as their text. Nulls are dropped.
func versionMap(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		switch v := v.(type) {
		case string:
			out[k] = v
		case json.Number:
			out[k] = v.String()
		case nil:
		default:
			b, _ := json.Marshal(v)
			out[k] = string(b)
		}
	}
	return out
}

// encodeMetadata renders metadata for the jsonb column with every NUL
// character removed from keys and strings (jsonb cannot hold \u0000; the
// savers strip it too). nil becomes {}.
// encodeStoredMetadata is md as a checkpoint row stores it: whole, or,
// when the part every checkpoint of its run repeats is worth it, its own
// keys and the key (metabase.Key) of that part (base), which the thread
// stores once (thread_checkpoint_metadata).
func encodeStoredMetadata(md Metadata) (row, base []byte, key string, err error) {
	own, shared := metabase.Split(md)
	if shared != nil {
		if base, err = encodeMetadata(shared); err != nil {
			return nil, nil, "", err
		}
		if len(base) >= metabase.MinBase {
			key = metabase.KeyOf(base)
			own[metabase.Key] = key
			row, err = encodeMetadata(own)
			return row, base, key, err
		}
	}
	row, err = encodeMetadata(md)
	return row, nil, "", err
}

func encodeMetadata(md Metadata) ([]byte, error) {
	if md == nil {
		return []byte("{}"), nil
	}
	b, err := json.Marshal(md)
	if err != nil {
		return nil, fmt.Errorf("encode metadata: %w", err)
	}
	if !bytes.Contains(b, []byte(`\u0000`)) {
		return b, nil
	}
	generic, err := decodeMetadata(b)
	if err != nil {
		return nil, err
	}
	return json.Marshal(jsonv.StripNUL(map[string]any(generic)))
}

func decodeMetadata(data []byte) (Metadata, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	md := Metadata{}
	if err := dec.Decode(&md); err != nil {
		return nil, fmt.Errorf("decode metadata: %w", err)
	}
	return md, nil
}
