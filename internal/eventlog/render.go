package eventlog

import (
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/postgres"
)

// Item is a run_events row to render: Data is the stored data, replaced
// by the whole event when Ref is set (Ref is then cleared).
type Item struct {
	RunID uuid.UUID
	Seq   int64
	Data  *json.RawMessage
	Ref   *[]byte
}

// DefaultCacheBytes is the cache size of a zero-sized Renderer.
const DefaultCacheBytes = 32 << 20

// Renderer renders events stored as references. It is safe for
// concurrent use; its cache holds rendered events by (run id, seq), at
// most CacheBytes of them (oldest out first).
type Renderer struct {
	mu       sync.Mutex
	max, n   int
	byKey    map[itemKey]*list.Element
	order    *list.List // of *cached, oldest first
	hits     int64
	rendered int64
}

type itemKey struct {
	run uuid.UUID
	seq int64
}

type cached struct {
	key  itemKey
	data json.RawMessage
}

// NewRenderer returns a Renderer caching up to cacheBytes of rendered
// events (0: DefaultCacheBytes; negative: no cache).
func NewRenderer(cacheBytes int) *Renderer {
	if cacheBytes == 0 {
		cacheBytes = DefaultCacheBytes
	}
	return &Renderer{max: cacheBytes, byKey: map[itemKey]*list.Element{}, order: list.New()}
}

// Stats reports how many events were served from the cache and how many
// were rendered, since the Renderer was made.
func (r *Renderer) Stats() (hits, rendered int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hits, r.rendered
}

func (r *Renderer) get(k itemKey) (json.RawMessage, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	el, ok := r.byKey[k]
	if !ok {
		return nil, false
	}
	r.hits++
	return el.Value.(*cached).data, true
}

func (r *Renderer) put(k itemKey, data json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rendered++
	if r.max < 0 || len(data) > r.max {
		return
	}
	if _, ok := r.byKey[k]; ok {
		return
	}
	r.byKey[k] = r.order.PushBack(&cached{key: k, data: data})
	r.n += len(data)
	for r.n > r.max {
		el := r.order.Front()
		c := el.Value.(*cached)
		r.order.Remove(el)
		delete(r.byKey, c.key)
		r.n -= len(c.data)
	}
}

// cpKey is a checkpoint of the thread being rendered.
type cpKey struct{ ns, id string }

// Render replaces the data of every item of thread threadID stored as a
// reference with the whole event, as PostgreSQL's jsonb returns it (so
// byte for byte what a row stored whole would read). Each referenced
// checkpoint is read once, the referenced tasks' writes in one query; the
// merged events are normalised in one query. An item whose checkpoint or
// writes are gone is read again (a concurrent MaterializeThread has
// stored it whole); still a reference then, it is an error.
func (r *Renderer) Render(ctx context.Context, db postgres.DBTX, threadID uuid.UUID, items []Item) error {
	var todo []int
	var refs []Ref
	for i, it := range items {
		if it.Ref == nil || *it.Ref == nil {
			continue
		}
		if d, ok := r.get(itemKey{it.RunID, it.Seq}); ok {
			*it.Data, *it.Ref = d, nil
			continue
		}
		var ref Ref
		if err := json.Unmarshal(*it.Ref, &ref); err != nil {
			return fmt.Errorf("event %s/%d: bad ref: %w", it.RunID, it.Seq, err)
		}
		todo, refs = append(todo, i), append(refs, ref)
	}
	if len(todo) == 0 {
		return nil
	}
	mds, err := prevMetadata(ctx, db, items, todo, refs)
	if err != nil {
		return err
	}
	values := map[cpKey]map[string]any{}
	var taskKeys []checkpoints.TaskKey
	for _, ref := range refs {
		if ref.Prev > 0 {
			continue
		}
		if ref.Task != "" {
			taskKeys = append(taskKeys, checkpoints.TaskKey{NS: ref.NS, CheckpointID: ref.ID, TaskID: ref.Task})
			continue
		}
		k := cpKey{ref.NS, ref.ID}
		if _, ok := values[k]; ok {
			continue
		}
		v, err := checkpointValues(ctx, db, threadID, ref)
		if err != nil {
			return fmt.Errorf("render events: %w", err)
		}
		values[k] = v
	}
	writes, err := checkpoints.TaskWrites(ctx, db, threadID.String(), taskKeys)
	if err != nil {
		return fmt.Errorf("render events: %w", err)
	}
	docs := make([]string, 0, len(todo))
	merged := todo[:0:0]
	for j, i := range todo {
		it, ref := items[i], refs[j]
		if ref.Prev > 0 {
			doc, err := withMetadata(*it.Data, mds[itemKey{it.RunID, it.Seq - ref.Prev}])
			if err != nil {
				return fmt.Errorf("event %s/%d: %w", it.RunID, it.Seq, err)
			}
			docs, merged = append(docs, doc), append(merged, i)
			continue
		}
		var vals map[string]any
		if ref.Task != "" {
			ws, found := writes[checkpoints.TaskKey{NS: ref.NS, CheckpointID: ref.ID, TaskID: ref.Task}]
			if found {
				var ok bool
				if vals, ok = taskValues(ws, ref.Keys); !ok {
					return fmt.Errorf("event %s/%d: task %s under checkpoint %s does not write each of %v once", it.RunID, it.Seq, ref.Task, ref.ID, ref.Keys)
				}
			}
		} else {
			vals = values[cpKey{ref.NS, ref.ID}]
		}
		if vals == nil {
			if err := reread(ctx, db, it); err != nil {
				return err
			}
			continue
		}
		doc, err := merge(*it.Data, ref, vals)
		if err != nil {
			return fmt.Errorf("event %s/%d: %w", it.RunID, it.Seq, err)
		}
		docs, merged = append(docs, doc), append(merged, i)
	}
	if len(docs) == 0 {
		return nil
	}
	rows, err := db.Query(ctx, `SELECT d::jsonb FROM unnest($1::text[]) WITH ORDINALITY AS u(d, o) ORDER BY o`, docs)
	if err != nil {
		return fmt.Errorf("render events: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[json.RawMessage])
	if err != nil {
		return fmt.Errorf("render events: %w", err)
	}
	for j, i := range merged {
		it := items[i]
		*it.Data, *it.Ref = out[j], nil
		r.put(itemKey{it.RunID, it.Seq}, out[j])
	}
	return nil
}

// checkpointValues returns the channel values of the checkpoint ref
// names, nil when it does not exist.
func checkpointValues(ctx context.Context, db postgres.DBTX, threadID uuid.UUID, ref Ref) (map[string]any, error) {
	t, err := checkpoints.GetTuple(ctx, db, checkpoints.Config{ThreadID: threadID.String(), NS: ref.NS, CheckpointID: ref.ID})
	switch {
	case apperr.CodeOf(err) == apperr.NotFound:
		return nil, nil
	case err != nil:
		return nil, err
	}
	if t.Checkpoint.ChannelValues == nil {
		return map[string]any{}, nil
	}
	return t.Checkpoint.ChannelValues, nil
}

// prevMetadata returns the metadata that the metadata references among
// items[todo] (refs) name, by the event that carries it, read from the log
// in one query (opened when sealed).
func prevMetadata(ctx context.Context, db postgres.DBTX, items []Item, todo []int, refs []Ref) (map[itemKey]json.RawMessage, error) {
	need := map[itemKey]bool{}
	for j, i := range todo {
		if refs[j].Prev > 0 {
			need[itemKey{items[i].RunID, items[i].Seq - refs[j].Prev}] = true
		}
	}
	if len(need) == 0 {
		return nil, nil
	}
	var runIDs []uuid.UUID
	var seqs []int64
	for k := range need {
		runIDs, seqs = append(runIDs, k.run), append(seqs, k.seq)
	}
	rows, err := db.Query(ctx, `SELECT e.run_id, e.seq, e.data FROM run_events e
		JOIN unnest($1::uuid[], $2::bigint[]) AS u(run_id, seq) ON e.run_id = u.run_id AND e.seq = u.seq`, runIDs, seqs)
	if err != nil {
		return nil, fmt.Errorf("render events: %w", err)
	}
	type prevRow struct {
		RunID uuid.UUID       `db:"run_id"`
		Seq   int64           `db:"seq"`
		Data  json.RawMessage `db:"data"`
	}
	found, err := pgx.CollectRows(rows, pgx.RowToStructByName[prevRow])
	if err != nil {
		return nil, fmt.Errorf("render events: %w", err)
	}
	docs := make(map[itemKey]json.RawMessage, len(found))
	kr := crypt.FromContext(ctx)
	for _, f := range found {
		if docs[itemKey{f.RunID, f.Seq}], err = kr.OpenJSON(f.Data); err != nil {
			return nil, fmt.Errorf("event %s/%d: %w", f.RunID, f.Seq, err)
		}
	}
	mds := make(map[itemKey]json.RawMessage, len(need))
	for k := range need {
		var pair []json.RawMessage
		if err := json.Unmarshal(docs[k], &pair); err != nil || len(pair) != 2 {
			return nil, fmt.Errorf("event %s/%d: no metadata to refer to", k.run, k.seq)
		}
		mds[k] = pair[1]
	}
	return mds, nil
}

// withMetadata is the stored [chunk] of a metadata reference with its
// metadata md appended.
func withMetadata(rest json.RawMessage, md json.RawMessage) (string, error) {
	var one []json.RawMessage
	if err := json.Unmarshal(rest, &one); err != nil || len(one) != 1 || md == nil {
		return "", fmt.Errorf("bad metadata reference")
	}
	b, err := json.Marshal([]json.RawMessage{one[0], md})
	return string(b), err
}

// reread reads item it again, for a reference whose checkpoint or writes
// are gone.
func reread(ctx context.Context, db postgres.DBTX, it Item) error {
	var data json.RawMessage
	var ref []byte
	err := db.QueryRow(ctx, `SELECT data, ref FROM run_events WHERE run_id = $1 AND seq = $2`, it.RunID, it.Seq).Scan(&data, &ref)
	if errors.Is(err, pgx.ErrNoRows) {
		return apperr.Errorf(apperr.NotFound, "Run %s has no event %d", it.RunID, it.Seq)
	}
	if err != nil {
		return fmt.Errorf("render events: %w", err)
	}
	if ref != nil {
		return fmt.Errorf("event %s/%d references a checkpoint or writes that do not exist", it.RunID, it.Seq)
	}
	*it.Data, *it.Ref = data, nil
	return nil
}

// merge puts the referenced values (a checkpoint's channel values, or a
// task's writes by channel) into the stored rest of an event. The document
// is valid JSON, not normalised (callers read it back through jsonb).
func merge(rest json.RawMessage, ref Ref, vals map[string]any) (string, error) {
	if len(ref.Path) == 0 {
		return mergeTop(rest, ref, vals)
	}
	var doc any
	if err := jsonv.Decode(rest, &doc); err != nil {
		return "", err
	}
	obj, _ := doc.(map[string]any)
	for _, p := range ref.Path {
		if obj == nil {
			break
		}
		obj, _ = obj[p].(map[string]any)
	}
	if obj == nil {
		return "", fmt.Errorf("no object at %v", ref.Path)
	}
	for _, k := range ref.Keys {
		v, ok := vals[k]
		if !ok {
			return "", fmt.Errorf("checkpoint %s has no value for %q", ref.ID, k)
		}
		if raw, ok := v.(json.RawMessage); ok {
			obj[k] = raw
			continue
		}
		b, err := encodeJSON(v)
		if err != nil {
			return "", err
		}
		obj[k] = json.RawMessage(b)
	}
	b, err := encodeJSON(doc)
	return string(b), err
}

// mergeTop is merge of values referenced at the top of the event (a
// values event, a run's result): the referenced members are appended to
// the stored object as they are, without decoding it or the values (a
// long conversation is most of the document).
func mergeTop(rest json.RawMessage, ref Ref, vals map[string]any) (string, error) {
	rest = bytes.TrimSpace(rest)
	if len(rest) < 2 || rest[0] != '{' || rest[len(rest)-1] != '}' {
		return "", fmt.Errorf("no object at %v", ref.Path)
	}
	var b strings.Builder
	b.Write(rest[:len(rest)-1])
	sep := len(bytes.TrimSpace(rest[1:len(rest)-1])) > 0
	for _, k := range ref.Keys {
		v, ok := vals[k]
		if !ok {
			return "", fmt.Errorf("checkpoint %s has no value for %q", ref.ID, k)
		}
		raw, isRaw := v.(json.RawMessage)
		if !isRaw {
			enc, err := encodeJSON(v)
			if err != nil {
				return "", err
			}
			raw = enc
		}
		key, err := json.Marshal(k)
		if err != nil {
			return "", err
		}
		if sep {
			b.WriteByte(',')
		}
		sep = true
		b.Write(key)
		b.WriteByte(':')
		b.Write(raw)
	}
	b.WriteByte('}')
	return b.String(), nil
}
