package checkpoints

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/checkpoints/deltareducer"
	"github.com/weftdev/weft/internal/checkpoints/serde"
	"github.com/weftdev/weft/internal/postgres"
)

// Delta channel kinds, as a worker registers them per channel
// (assistants.GraphInfo.ChannelKinds) and graph.Channel.Delta carries them.
const (
	// DeltaMessages is a LangGraph DeltaChannel whose reducer is
	// messagesDeltaReducer (LangGraph.js MessagesDeltaValue): Weft
	// rebuilds it (deltareducer.MessagesDeltaReduce).
	DeltaMessages = "delta:messages"
	// DeltaUnknown is a DeltaChannel with a reducer Weft does not
	// implement: reads show UnresolvedDelta for it, except at a snapshot.
	DeltaUnknown = "delta"
)

// LangGraph's delta channels (DeltaChannel, MessagesDeltaValue; LangGraph.js
// ≥ 1.7, Python ≥ 1.2).
//
// A delta channel's normal step stores no value: its version is bumped and
// its blob row is "empty", the tasks' writes to it (checkpoint_writes) are
// the deltas, and every N updates (or supersteps) a full snapshot blob
// {"lc":2,"type":"delta_snapshot","value":…} is stored instead. The value
// at checkpoint C is rebuilt from the nearest ancestor A (C itself
// included) that stores a value for the channel (a snapshot, or a plain
// value written before the channel became a delta channel): A's value,
// then the channel's writes stored under A and every later checkpoint of
// the chain up to C's parent, in order (each checkpoint's in (task_path,
// task_id, idx) order), replayed through the reducer. Without such an
// ancestor the walk starts from the unset channel at the root.
//
// deltaChainSQL reads the part of the chain a set of checkpoints needs in
// one recursive query: from the given checkpoints up their parents,
// stopping at a checkpoint that stores a value for every requested
// channel, with that value for each (checkpoint, channel) when stored.
// deltaWritesSQL then reads the chain's writes to those channels in one
// query: two queries for a whole history page, whatever its length.
const deltaChainSQL = `
WITH RECURSIVE chain(checkpoint_id, parent_id, versions, done) AS (
    SELECT c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint -> 'channel_versions',
        NOT EXISTS (SELECT 1 FROM unnest($4::text[]) AS d(channel) WHERE NOT EXISTS (
            SELECT 1 FROM checkpoint_blobs bl WHERE bl.thread_id = $1 AND bl.checkpoint_ns = $2
                AND bl.channel = d.channel AND bl.version = c.checkpoint -> 'channel_versions' ->> d.channel
                AND bl.type <> 'empty'))
    FROM checkpoints c
    WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = ANY($3::text[])
  UNION
    SELECT p.checkpoint_id, p.parent_checkpoint_id, p.checkpoint -> 'channel_versions',
        NOT EXISTS (SELECT 1 FROM unnest($4::text[]) AS d(channel) WHERE NOT EXISTS (
            SELECT 1 FROM checkpoint_blobs bl WHERE bl.thread_id = $1 AND bl.checkpoint_ns = $2
                AND bl.channel = d.channel AND bl.version = p.checkpoint -> 'channel_versions' ->> d.channel
                AND bl.type <> 'empty'))
    FROM chain JOIN checkpoints p ON p.thread_id = $1 AND p.checkpoint_ns = $2 AND p.checkpoint_id = chain.parent_id
    WHERE NOT chain.done
)
SELECT ch.checkpoint_id, coalesce(ch.parent_id, '') AS parent_id, d.channel, b.type, b.blob
FROM chain ch CROSS JOIN unnest($4::text[]) AS d(channel)
LEFT JOIN LATERAL (
    SELECT bl.type, bl.blob FROM checkpoint_blobs bl
    WHERE bl.thread_id = $1 AND bl.checkpoint_ns = $2 AND bl.channel = d.channel
      AND bl.version = ch.versions ->> d.channel AND bl.type <> 'empty'
    LIMIT 1
) b ON true`

// deltaWritesSQL reads the writes of a chain's checkpoints to the delta
// channels, in replay order within each checkpoint.
const deltaWritesSQL = `
SELECT checkpoint_id, task_id, channel, type, blob FROM checkpoint_writes
WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = ANY($3::text[]) AND channel = ANY($4::text[])
ORDER BY checkpoint_id, task_path, task_id, idx`

type deltaChainRow struct {
	CheckpointID string  `db:"checkpoint_id"`
	ParentID     string  `db:"parent_id"`
	Channel      string  `db:"channel"`
	Type         *string `db:"type"`
	Blob         []byte  `db:"blob"`
}

type deltaWriteRow struct {
	CheckpointID string  `db:"checkpoint_id"`
	TaskID       string  `db:"task_id"`
	Channel      string  `db:"channel"`
	Type         *string `db:"type"`
	Blob         []byte  `db:"blob"`
}

// deltaChain is the part of a thread's parent chain that delta reads need:
// parents, the stored values (snapshots) and the writes to the channels.
type deltaChain struct {
	parent map[string]string           // checkpoint id → parent id ("" at the root)
	stored map[[2]string]StoredValue   // (checkpoint id, channel) → stored value
	writes map[[2]string][]StoredWrite // (checkpoint id, channel) → writes in order
	memo   map[[2]string]any           // (checkpoint id, channel) → rebuilt value
	has    map[[2]string]bool          // memo holds the key (a value may be nil: unset)
	failed map[[2]string]error         // decode failures, reported once per key
}

// deltaChainLoad reads the chain from the checkpoints ids of namespace ns
// (or from their parents, with fromParents) back to the nearest stored
// value of every channel: two queries.
func deltaChainLoad(ctx context.Context, db postgres.DBTX, threadID, ns string, ids, channels []string) (*deltaChain, error) {
	rows, err := db.Query(ctx, deltaChainSQL, threadID, ns, ids, channels)
	if err != nil {
		return nil, fmt.Errorf("delta chain: %w", err)
	}
	chain, err := pgx.CollectRows(rows, pgx.RowToStructByName[deltaChainRow])
	if err != nil {
		return nil, fmt.Errorf("delta chain: %w", err)
	}
	var types []*string
	var data []*[]byte
	for i := range chain {
		if chain[i].Type != nil {
			types, data = append(types, chain[i].Type), append(data, &chain[i].Blob)
		}
	}
	if _, err := resolveLists(ctx, db, threadID, types, data); err != nil {
		return nil, fmt.Errorf("delta chain: %w", err)
	}
	c := &deltaChain{parent: map[string]string{}, stored: map[[2]string]StoredValue{}, writes: map[[2]string][]StoredWrite{},
		memo: map[[2]string]any{}, has: map[[2]string]bool{}, failed: map[[2]string]error{}}
	for _, r := range chain {
		c.parent[r.CheckpointID] = r.ParentID
		if r.Type != nil {
			sv, err := OpenStored(ctx, StoredValue{Type: *r.Type, Data: r.Blob})
			if err != nil {
				return nil, fmt.Errorf("delta chain: checkpoint %s channel %q: %w", r.CheckpointID, r.Channel, err)
			}
			c.stored[[2]string{r.CheckpointID, r.Channel}] = sv
		}
	}
	if len(c.parent) == 0 {
		return c, nil
	}
	rows, err = db.Query(ctx, deltaWritesSQL, threadID, ns, slices.Collect(maps.Keys(c.parent)), channels)
	if err != nil {
		return nil, fmt.Errorf("delta writes: %w", err)
	}
	writes, err := pgx.CollectRows(rows, pgx.RowToStructByName[deltaWriteRow])
	if err != nil {
		return nil, fmt.Errorf("delta writes: %w", err)
	}
	for _, w := range writes {
		typ := ""
		if w.Type != nil {
			typ = *w.Type
		}
		sv, err := OpenStored(ctx, StoredValue{Type: typ, Data: w.Blob})
		if err != nil {
			return nil, fmt.Errorf("delta writes: checkpoint %s task %s channel %q: %w", w.CheckpointID, w.TaskID, w.Channel, err)
		}
		k := [2]string{w.CheckpointID, w.Channel}
		c.writes[k] = append(c.writes[k], StoredWrite{TaskID: w.TaskID, Channel: w.Channel, Value: sv})
	}
	return c, nil
}

// IsDeltaSnapshot reports whether v is a decoded DeltaSnapshot blob
// ({"lc":2,"type":"delta_snapshot","value":…}) and returns its value.
func IsDeltaSnapshot(v any) (any, bool) {
	d, ok := v.(map[string]any)
	if !ok || d["type"] != "delta_snapshot" {
		return nil, false
	}
	if lc, _ := d["lc"].(json.Number); lc != "2" {
		return nil, false
	}
	val, ok := d["value"]
	return val, ok
}

// decodeStored decodes a stored value fully (LangChain envelopes
// normalised), unwrapping a DeltaSnapshot.
func decodeStored(s StoredValue) (any, error) {
	v, err := decodeValue(s.Type, s.Data)
	if err == nil {
		v, err = Materialize(v)
	}
	if err != nil {
		return nil, err
	}
	if inner, ok := IsDeltaSnapshot(v); ok {
		return inner, nil
	}
	return v, nil
}

// value rebuilds channel ch at checkpoint id with the messages delta
// reducer (nil: the channel is unset there). Values are memoised per
// (checkpoint, channel), so a page of checkpoints of one chain replays
// each write once.
func (c *deltaChain) value(id, ch string) (any, error) {
	var path []string
	var base any
	for x := id; ; {
		k := [2]string{x, ch}
		if c.has[k] {
			base = c.memo[k]
			break
		}
		if s, ok := c.stored[k]; ok {
			v, err := decodeStored(s)
			if err != nil {
				return nil, fmt.Errorf("checkpoint %s channel %q: %w", x, ch, err)
			}
			c.memo[k], c.has[k], base = v, true, v
			break
		}
		path = append(path, x)
		p, ok := c.parent[x]
		if !ok || p == "" {
			// The root (or a checkpoint the chain does not reach): unset.
			base = nil
			path = path[:len(path)-1]
			c.memo[k], c.has[k] = nil, true
			break
		}
		x = p
	}
	for i := len(path) - 1; i >= 0; i-- {
		x := path[i]
		p := c.parent[x]
		ws := c.writes[[2]string{p, ch}]
		vals := make([]any, 0, len(ws))
		for _, w := range ws {
			v, err := decodeValue(w.Value.Type, w.Value.Data)
			if err == nil {
				v, err = Materialize(v)
			}
			if errors.Is(err, serde.ErrEmpty) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("checkpoint %s write %s (%q): %w", p, w.TaskID, ch, err)
			}
			vals = append(vals, v)
		}
		base = deltareducer.DeltaReplay(base, vals)
		k := [2]string{x, ch}
		c.memo[k], c.has[k] = base, true
	}
	return base, nil
}

// UnresolvedDeltaKey is the key of the marker a read shows as the value of
// a delta channel it cannot rebuild (UnresolvedDelta).
const UnresolvedDeltaKey = "__weft_unresolved__"

// UnresolvedDelta is what a state read shows as the value of delta channel
// ch when Weft cannot rebuild it (its reducer is not one Weft implements):
// {"__weft_unresolved__": "delta_channel", "channel": ch, "detail": …},
// never a silent [] or a missing key. At a checkpoint that stores a
// snapshot of the channel, reads show the snapshot's value instead.
func UnresolvedDelta(ch string) map[string]any {
	return map[string]any{
		UnresolvedDeltaKey: "delta_channel",
		"channel":          ch,
		"detail": "LangGraph DeltaChannel " + ch + " stores only its writes and Weft does not implement its reducer " +
			"(only messagesDeltaReducer, MessagesDeltaValue): read it through LangGraph's getState",
	}
}

// DeltaChannels returns the delta channels of t and their kinds: those of
// kinds (a graph's registration: channel → DeltaMessages or DeltaUnknown)
// plus any channel the checkpoint's metadata counts as a delta channel
// (LangGraph's counters_since_delta_snapshot) or that stores a
// DeltaSnapshot, of unknown kind unless kinds names it.
func DeltaChannels(t *Tuple, kinds map[string]string) map[string]string {
	var out map[string]string
	add := func(ch, kind string) {
		if out == nil {
			out = map[string]string{}
		}
		if _, ok := out[ch]; !ok {
			out[ch] = kind
		}
	}
	for ch, k := range kinds {
		add(ch, k)
	}
	if counters, ok := t.Metadata["counters_since_delta_snapshot"].(map[string]any); ok {
		for ch := range counters {
			add(ch, DeltaUnknown)
		}
	}
	for ch, v := range t.Checkpoint.ChannelValues {
		if d, ok := v.(map[string]any); ok && d["type"] == "delta_snapshot" {
			add(ch, DeltaUnknown)
		}
	}
	return out
}

// ResolveDelta fills in, in place, the values of the delta
// channels of tuples (DeltaChannels with kinds): a snapshot stored at the
// checkpoint itself is unwrapped; a channel of kind DeltaMessages that
// has a version is rebuilt from the nearest snapshot up the parent chain
// and the writes since (see deltaChainSQL: two queries per namespace for
// all the tuples); any other delta channel that has a version shows
// UnresolvedDelta. Tuples without delta channels cost nothing.
func ResolveDelta(ctx context.Context, db postgres.DBTX, tuples []Tuple, kinds map[string]string) error {
	type need struct {
		ids      []string
		channels map[string]bool
	}
	byNS := map[string]*need{}
	for i := range tuples {
		t := &tuples[i]
		for ch, kind := range DeltaChannels(t, kinds) {
			if v, ok := t.Checkpoint.ChannelValues[ch]; ok {
				if m, err := Materialize(v); err == nil {
					if inner, ok := IsDeltaSnapshot(m); ok {
						t.Checkpoint.ChannelValues[ch] = inner
					}
				}
				continue // a value stored at the checkpoint itself
			}
			if _, versioned := t.Checkpoint.ChannelVersions[ch]; !versioned {
				continue // never written: unset
			}
			if kind != DeltaMessages {
				t.Checkpoint.ChannelValues[ch] = UnresolvedDelta(ch)
				continue
			}
			n := byNS[t.Config.NS]
			if n == nil {
				n = &need{channels: map[string]bool{}}
				byNS[t.Config.NS] = n
			}
			if len(n.ids) == 0 || n.ids[len(n.ids)-1] != t.Config.CheckpointID {
				n.ids = append(n.ids, t.Config.CheckpointID)
			}
			n.channels[ch] = true
		}
	}
	for ns, n := range byNS {
		channels := slices.Sorted(maps.Keys(n.channels))
		chain, err := deltaChainLoad(ctx, db, tuples[0].Config.ThreadID, ns, n.ids, channels)
		if err != nil {
			return err
		}
		for i := range tuples {
			t := &tuples[i]
			if t.Config.NS != ns {
				continue
			}
			for _, ch := range channels {
				if _, ok := t.Checkpoint.ChannelValues[ch]; ok {
					continue
				}
				if _, versioned := t.Checkpoint.ChannelVersions[ch]; !versioned || DeltaChannels(t, kinds)[ch] != DeltaMessages {
					continue
				}
				v, err := chain.value(t.Config.CheckpointID, ch)
				if err != nil {
					return err
				}
				if v != nil {
					t.Checkpoint.ChannelValues[ch] = v
				}
			}
		}
	}
	return nil
}

// DeltaHistory is what LangGraph's getDeltaChannelHistory returns for one
// channel, as stored: the channel's writes along the parent chain, oldest
// first (each checkpoint's in (task_path, task_id, idx) order), and the
// seed, the value stored at the checkpoint where the walk stopped (nil
// when it reached the root without one).
type DeltaHistory struct {
	Seed   *StoredValue
	Writes []StoredWrite
}

// ReadDeltaHistory is LangGraph's getDeltaChannelHistory on the
// store, in two queries whatever the chain's length: for each channel, the
// walk starts at the parent of checkpoint cfg (the latest of cfg.NS when
// cfg.CheckpointID is "") and goes up the parents, collecting each
// ancestor's writes to the channel, and stops after the first ancestor
// that stores a value for it (its writes included), which is the seed. A
// missing checkpoint gives empty histories.
func ReadDeltaHistory(ctx context.Context, db postgres.DBTX, cfg Config, channels []string) (map[string]DeltaHistory, error) {
	out := make(map[string]DeltaHistory, len(channels))
	for _, ch := range channels {
		out[ch] = DeltaHistory{Writes: []StoredWrite{}}
	}
	if len(channels) == 0 {
		return out, nil
	}
	var parent *string
	err := db.QueryRow(ctx, `SELECT parent_checkpoint_id FROM checkpoints
		WHERE thread_id = $1 AND checkpoint_ns = $2 AND ($3 = '' OR checkpoint_id = $3)
		ORDER BY checkpoint_id DESC LIMIT 1`, cfg.ThreadID, cfg.NS, cfg.CheckpointID).Scan(&parent)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && parent == nil) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("delta history: %w", err)
	}
	chain, err := deltaChainLoad(ctx, db, cfg.ThreadID, cfg.NS, []string{*parent}, channels)
	if err != nil {
		return nil, err
	}
	for _, ch := range channels {
		var rev [][]StoredWrite
		h := DeltaHistory{Writes: []StoredWrite{}}
		for x := *parent; x != ""; {
			if _, ok := chain.parent[x]; !ok {
				break
			}
			rev = append(rev, chain.writes[[2]string{x, ch}])
			if s, ok := chain.stored[[2]string{x, ch}]; ok {
				h.Seed = &s
				break
			}
			x = chain.parent[x]
		}
		for i := len(rev) - 1; i >= 0; i-- {
			h.Writes = append(h.Writes, rev[i]...)
		}
		out[ch] = h
	}
	return out, nil
}
