package checkpoints

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/checkpoints/serde"
	"github.com/weftdev/weft/internal/postgres"
)

// TypeList is the checkpoint_blobs type of a list stored by reference to
// the thread's element log (migration 014): the blob is a listHeader, and
// the list's JSON is '[' + the elements' data joined by ',' + ']'. Readers
// outside this package see it rebuilt: weft_blob() in SQL, the views of the
// "langgraph" schema, and every Go read of this package.
const TypeList = "weft_list"

// CompactMinBytes is the size from which a list is stored by reference: a
// shorter one stays a plain "json" blob, which costs less than an element
// row per entry and keeps short threads exactly as a stock LangGraph saver
// writes them (it can continue them in place; see the "langgraph" views
// for reading the rest).
const CompactMinBytes = 1024

// listHeader is a TypeList blob: the list's length, its hash (listHash of
// its elements' hashes) and the inclusive seq ranges whose elements, in
// order, are the list.
type listHeader struct {
	N int        `json:"n"`
	H []byte     `json:"h"`
	R [][2]int64 `json:"r"`
}

// compactList is one list-valued channel of a put on its way to storage.
type compactList struct {
	idx    int      // its position in the put's blob arrays
	elems  [][]byte // the elements' JSON, sub-slices of the encoded list
	hashes [][32]byte
	seqs   []int64 // per element; 0 until known
}

// splitList returns the elements of a JSON array as they appear in data
// (sub-slices), or ok=false when data is not a non-empty array written the
// way serde.Encode writes it (compact: joining the elements with ',' inside
// brackets gives data back byte for byte).
func splitList(data []byte) (elems [][]byte, ok bool) {
	if len(data) < 3 || data[0] != '[' || data[len(data)-1] != ']' {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	size := 1
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		start := int(dec.InputOffset()) - len(raw)
		if start < 0 || !bytes.Equal(data[start:start+len(raw)], raw) {
			return nil, false
		}
		elems = append(elems, data[start:start+len(raw)])
		size += len(raw) + 1
	}
	if len(elems) == 0 || size != len(data) {
		return nil, false // whitespace somewhere: not serde.Encode's form
	}
	return elems, true
}

// listHash hashes a list from its elements' hashes: a prefix of a list has
// the hash the list's first elements give, which is how a put recognizes
// "the parent's list plus new elements" without reading the parent's
// elements.
type listHash struct{ h [32]byte }

func (l *listHash) add(e [32]byte) {
	var buf [64]byte
	copy(buf[:32], l.h[:])
	copy(buf[32:], e[:])
	l.h = sha256.Sum256(buf[:])
}

// parentListsSQL reads the headers of the parent checkpoint's TypeList
// blobs for the given channels.
const parentListsSQL = `
SELECT v.key AS channel, b.blob FROM checkpoints c
CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') v
JOIN checkpoint_blobs b ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
    AND b.channel = v.key AND b.version = v.value AND b.type = '` + TypeList + `'
WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = $3 AND v.key = ANY($4::text[])`

// elementsByHashSQL finds elements the thread already holds.
const elementsByHashSQL = `
SELECT DISTINCT ON (hash) hash, seq FROM thread_elements
WHERE thread_id = $1 AND hash = ANY($2::bytea[]) ORDER BY hash, seq`

// elementsInsertSQL hands out a contiguous block of $2 seqs of the thread
// and stores the new elements under them, returning the block's last seq.
const elementsInsertSQL = `
WITH a AS (
    INSERT INTO thread_element_seqs AS s (thread_id, last) VALUES ($1, $2)
    ON CONFLICT (thread_id) DO UPDATE SET last = s.last + $2
    RETURNING last
), ins AS (
    INSERT INTO thread_elements (thread_id, seq, hash, data, run_id, step)
    SELECT $1, a.last - $2 + e.ord, e.hash, e.data, $5, $6
    FROM a, unnest($3::bytea[], $4::bytea[]) WITH ORDINALITY AS e(hash, data, ord)
)
SELECT last FROM a`

// compactLists rewrites the put's JSON lists (types[i] "json") of at least
// CompactMinBytes as TypeList headers, storing the elements the thread does not hold yet.
// A list that is its parent version's list plus new elements costs one
// header read and the new elements; any other list (an element replaced or
// removed, a fork's first write, a list written before migration 014)
// finds its known elements by hash.
func compactLists(ctx context.Context, db postgres.DBTX, cfg Config, md Metadata, channels, types []string, blobs [][]byte) error {
	var lists []*compactList
	var names []string
	for i := range channels {
		if types[i] != serde.TypeJSON || len(blobs[i]) < CompactMinBytes {
			continue
		}
		elems, ok := splitList(blobs[i])
		if !ok {
			continue
		}
		l := &compactList{idx: i, elems: elems, hashes: make([][32]byte, len(elems)), seqs: make([]int64, len(elems))}
		for j, e := range elems {
			l.hashes[j] = sha256.Sum256(e)
		}
		lists, names = append(lists, l), append(names, channels[i])
	}
	if len(lists) == 0 {
		return nil
	}
	parents := map[string]listHeader{}
	if cfg.CheckpointID != "" {
		rows, err := db.Query(ctx, parentListsSQL, cfg.ThreadID, cfg.NS, cfg.CheckpointID, names)
		if err != nil {
			return fmt.Errorf("parent lists: %w", err)
		}
		type parentRow struct {
			Channel string `db:"channel"`
			Blob    []byte `db:"blob"`
		}
		found, err := pgx.CollectRows(rows, pgx.RowToStructByName[parentRow])
		if err != nil {
			return fmt.Errorf("parent lists: %w", err)
		}
		for _, f := range found {
			var h listHeader
			if err := json.Unmarshal(f.Blob, &h); err != nil {
				return fmt.Errorf("parent list %q: %w", f.Channel, err)
			}
			parents[f.Channel] = h
		}
	}
	// Lists extending their parent's reuse its ranges; the rest look their
	// elements up by hash.
	var lookup [][]byte
	headers := make([]listHeader, len(lists))
	for i, l := range lists {
		var lh listHash
		p, ok := parents[channels[l.idx]]
		prefix := 0
		for j, h := range l.hashes {
			if ok && j == p.N && bytes.Equal(lh.h[:], p.H) {
				prefix = p.N
			}
			lh.add(h)
		}
		if ok && p.N == len(l.hashes) && bytes.Equal(lh.h[:], p.H) {
			prefix = p.N
		}
		headers[i] = listHeader{N: len(l.elems), H: lh.h[:]}
		if prefix > 0 {
			headers[i].R = append(headers[i].R, p.R...)
			for j := range prefix {
				l.seqs[j] = -1 // covered by the parent's ranges
			}
		}
		if prefix == 0 {
			for _, h := range l.hashes {
				lookup = append(lookup, h[:])
			}
		}
	}
	known := map[[32]byte]int64{}
	if len(lookup) > 0 {
		rows, err := db.Query(ctx, elementsByHashSQL, cfg.ThreadID, lookup)
		if err != nil {
			return fmt.Errorf("list elements: %w", err)
		}
		type knownRow struct {
			Hash []byte `db:"hash"`
			Seq  int64  `db:"seq"`
		}
		found, err := pgx.CollectRows(rows, pgx.RowToStructByName[knownRow])
		if err != nil {
			return fmt.Errorf("list elements: %w", err)
		}
		for _, f := range found {
			known[[32]byte(f.Hash)] = f.Seq
		}
	}
	// New elements, each stored once even when several lists hold it.
	var newHashes, newData [][]byte
	newIndex := map[[32]byte]int{}
	for _, l := range lists {
		for j, h := range l.hashes {
			if l.seqs[j] != 0 {
				continue
			}
			if s, ok := known[h]; ok {
				l.seqs[j] = s
				continue
			}
			if _, ok := newIndex[h]; !ok {
				newIndex[h] = len(newHashes)
				newHashes, newData = append(newHashes, l.hashes[j][:]), append(newData, l.elems[j])
			}
		}
	}
	if len(newHashes) > 0 {
		var runID *string
		if r, ok := md["run_id"].(string); ok {
			runID = &r
		}
		var step *int
		if s, ok := md.Step(); ok {
			step = &s
		}
		var last int64
		if err := db.QueryRow(ctx, elementsInsertSQL, cfg.ThreadID, len(newHashes), newHashes, newData, runID, step).Scan(&last); err != nil {
			return fmt.Errorf("list elements: %w", err)
		}
		first := last - int64(len(newHashes)) + 1
		for _, l := range lists {
			for j, h := range l.hashes {
				if l.seqs[j] == 0 {
					l.seqs[j] = first + int64(newIndex[h])
				}
			}
		}
	}
	for i, l := range lists {
		h := &headers[i]
		for _, s := range l.seqs {
			if s == -1 {
				continue
			}
			if n := len(h.R); n > 0 && h.R[n-1][1]+1 == s {
				h.R[n-1][1] = s
			} else {
				h.R = append(h.R, [2]int64{s, s})
			}
		}
		enc, err := json.Marshal(h)
		if err != nil {
			return err
		}
		types[l.idx], blobs[l.idx] = TypeList, enc
	}
	return nil
}

// errElementMissing reports a TypeList header naming a seq the thread's
// element log does not hold: never silently a shorter list.
var errElementMissing = errors.New("list element missing from the thread's element log")

// listRanges is the union of the seq ranges a set of headers name, as
// sorted, non-overlapping ranges.
func listRanges(headers []*listHeader) (lo, hi []int64) {
	var all [][2]int64
	for _, h := range headers {
		all = append(all, h.R...)
	}
	if len(all) == 0 {
		return nil, nil
	}
	slices.SortFunc(all, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	cur := all[0]
	for _, r := range all[1:] {
		if r[0] <= cur[1]+1 {
			cur[1] = max(cur[1], r[1])
			continue
		}
		lo, hi = append(lo, cur[0]), append(hi, cur[1])
		cur = r
	}
	return append(lo, cur[0]), append(hi, cur[1])
}

// elementsByRangesSQL reads the elements in a set of seq ranges.
const elementsByRangesSQL = `
SELECT e.seq, e.data FROM unnest($2::bigint[], $3::bigint[]) AS r(lo, hi)
JOIN thread_elements e ON e.thread_id = $1 AND e.seq BETWEEN r.lo AND r.hi`

// listElements reads, once, every element the headers name.
func listElements(ctx context.Context, db postgres.DBTX, threadID string, headers []*listHeader) (map[int64][]byte, error) {
	lo, hi := listRanges(headers)
	out := map[int64][]byte{}
	if len(lo) == 0 {
		return out, nil
	}
	rows, err := db.Query(ctx, elementsByRangesSQL, threadID, lo, hi)
	if err != nil {
		return nil, fmt.Errorf("list elements: %w", err)
	}
	var seq int64
	var data []byte
	_, err = pgx.ForEachRow(rows, []any{&seq, &data}, func() error {
		out[seq] = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list elements: %w", err)
	}
	return out, nil
}

// parseListHeader decodes a TypeList blob.
func parseListHeader(blob []byte) (*listHeader, error) {
	var h listHeader
	if err := json.Unmarshal(blob, &h); err != nil {
		return nil, fmt.Errorf("%w: list header: %v", serde.ErrMalformed, err)
	}
	return &h, nil
}

// buildList is the list's JSON from its header and the thread's elements.
func buildList(h *listHeader, elems map[int64][]byte) ([]byte, error) {
	size := 2
	for _, r := range h.R {
		for s := r[0]; s <= r[1]; s++ {
			e, ok := elems[s]
			if !ok {
				return nil, fmt.Errorf("%w: seq %d", errElementMissing, s)
			}
			size += len(e) + 1
		}
	}
	out := make([]byte, 0, size)
	out = append(out, '[')
	n := 0
	for _, r := range h.R {
		for s := r[0]; s <= r[1]; s++ {
			if n > 0 {
				out = append(out, ',')
			}
			out = append(out, elems[s]...)
			n++
		}
	}
	if n != h.N {
		return nil, fmt.Errorf("%w: list header counts %d elements, ranges name %d", serde.ErrMalformed, h.N, n)
	}
	return append(out, ']'), nil
}

// resolveLists turns TypeList rows among blobs into the "json" rows they
// stand for, reading the elements they name in one query.
func resolveLists(ctx context.Context, db postgres.DBTX, threadID string, types []*string, blobs []*[]byte) error {
	var headers []*listHeader
	var at []int
	for i, t := range types {
		if *t != TypeList {
			continue
		}
		h, err := parseListHeader(*blobs[i])
		if err != nil {
			return err
		}
		headers, at = append(headers, h), append(at, i)
	}
	if len(headers) == 0 {
		return nil
	}
	elems, err := listElements(ctx, db, threadID, headers)
	if err != nil {
		return err
	}
	for k, h := range headers {
		data, err := buildList(h, elems)
		if err != nil {
			return fmt.Errorf("thread %s: %w", threadID, err)
		}
		*types[at[k]], *blobs[at[k]] = serde.TypeJSON, data
	}
	return nil
}
