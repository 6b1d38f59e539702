package checkpoints

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/checkpoints/listcache"
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
type listHeader = listcache.Header

// compactList is one list-valued channel of a put on its way to storage.
type compactList struct {
	idx    int      // its position in the put's blob arrays
	elems  [][]byte // the elements' JSON, sub-slices of the encoded list
	hashes [][32]byte
	seqs   []int64 // per element, once known
	hash   [32]byte
	parent listMeta // the parent's version of the channel
}

// splitList returns the elements of a JSON array as they appear in data
// (sub-slices), or ok=false when data is not a non-empty array written the
// way serde.Encode writes it (compact: joining the elements with ',' inside
// brackets gives data back byte for byte).
func splitList(data []byte) (elems [][]byte, ok bool) {
	if len(data) < 3 || data[0] != '[' || data[len(data)-1] != ']' {
		return nil, false
	}
	// One pass finds the commas between elements (outside strings, at
	// depth 1), without validating them: a put's JSON blobs are valid
	// (serde.Encode's, or a worker's serialized JSON, checked when it was
	// parsed), and whatever the elements, joining them gives data back.
	// Whitespace outside strings is not serde.Encode's form.
	depth, start, inString := 0, 1, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				if i != len(data)-1 || start == i {
					return nil, false // not one array, or an empty element
				}
				elems = append(elems, data[start:i])
			}
		case ',':
			if depth == 1 {
				if start == i {
					return nil, false
				}
				elems = append(elems, data[start:i])
				start = i + 1
			}
		case ' ', '\t', '\r', '\n':
			return nil, false
		}
	}
	return elems, depth == 0 && len(elems) > 0
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

// listMeta is what a put needs of its parent's version of a list channel:
// the version, the list's length and hash (N < 0: the version is not a
// TypeList). It depends on the list's content only, never on seqs, so a
// cached one stays true even when the put that cached it was rolled back.
type listMeta struct {
	Version string
	N       int
	H       []byte
}

// listMetas caches, per checkpoint (thread, namespace, id), the listMeta of
// its list channels as this process put them: a put whose parent this
// process wrote (the usual case: the previous step of the same run) needs
// no read to find it.
var listMetas = newMetaCache(20000)

type metaCache struct {
	mu    sync.Mutex
	max   int
	m     map[string]map[string]listMeta
	order []string
}

func newMetaCache(n int) *metaCache { return &metaCache{max: n, m: map[string]map[string]listMeta{}} }

func metaKey(thread, ns, id string) string { return thread + "\x00" + ns + "\x00" + id }

func (c *metaCache) get(key string) map[string]listMeta {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key]
}

// clear forgets everything (tests: every put then reads its parent).
func (c *metaCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m, c.order = map[string]map[string]listMeta{}, nil
}

func (c *metaCache) put(key string, v map[string]listMeta) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; !ok {
		if len(c.order) >= c.max {
			drop := c.order[:c.max/2]
			for _, k := range drop {
				delete(c.m, k)
			}
			c.order = append([]string(nil), c.order[c.max/2:]...)
		}
		c.order = append(c.order, key)
	}
	c.m[key] = v
}

// parentListsSQL reads the parent checkpoint's versions of the given
// channels, with the header when the version is a TypeList.
const parentListsSQL = `
SELECT v.key AS channel, v.value AS version, b.blob FROM checkpoints c
CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') v
LEFT JOIN checkpoint_blobs b ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
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

// listExtendSQL stores a list that is its parent version's list ($4) plus
// $6 new elements, without reading anything first (so it can wait in a
// Pipeline behind the parent's own put): the new elements get the next
// block of the thread's seqs and the header the parent's ranges extended
// by that block (weft_list_extend raises when the parent version is
// missing). A version stored already (a checkpoint put again, as the
// Python worker's end commit re-sends its last one complete) writes
// nothing: no seqs, no elements, no header.
const listExtendSQL = `
WITH p AS (
    SELECT convert_from(blob, 'UTF8')::jsonb -> 'r' AS r FROM checkpoint_blobs
    WHERE thread_id = $1 AND checkpoint_ns = $2 AND channel = $3 AND version = $4 AND type = '` + TypeList + `'
), a AS (
    INSERT INTO thread_element_seqs AS s (thread_id, last)
    SELECT $1, $6 WHERE NOT EXISTS (SELECT 1 FROM checkpoint_blobs
        WHERE thread_id = $1 AND checkpoint_ns = $2 AND channel = $3 AND version = $5)
    ON CONFLICT (thread_id) DO UPDATE SET last = s.last + $6
    RETURNING last
), ins AS (
    INSERT INTO thread_elements (thread_id, seq, hash, data, run_id, step)
    SELECT $1, a.last - $6 + e.ord, e.hash, e.data, $9, $10
    FROM a, unnest($7::bytea[], $8::bytea[]) WITH ORDINALITY AS e(hash, data, ord)
)
INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
SELECT $1, $2, $3, $5, '` + TypeList + `', convert_to(jsonb_build_object('n', $11::int, 'h', $12::text,
    'r', weft_list_extend((SELECT r FROM p), a.last, $6))::text, 'UTF8')
FROM a
ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING`

// compactCandidate reports whether a blob may be stored compact (a JSON
// list of CompactMinBytes or more): compactLists decides, and its
// statements may read what the puts before it wrote.
func compactCandidate(typ string, data []byte) bool {
	return typ == serde.TypeJSON && len(data) >= CompactMinBytes && bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("["))
}

// compactLists stores the put's JSON lists (types[i] "json") of at least
// CompactMinBytes by reference to the thread's element log and returns the
// indexes of the channels it wrote itself (the caller leaves them out of
// its blob insert); the others it rewrote in place as TypeList headers.
//
// A list that is its parent version's list plus new elements (a turn of a
// conversation) costs no read when this process put the parent: one
// statement stores the new elements and the header. Any other list (an
// element replaced or removed, a fork's first write, a list that just
// reached CompactMinBytes) reads the parent's version and finds its known
// elements by hash; on a Pipeline without a Reader those reads fail with
// postgres.ErrPipelineRead, before anything was queued.
func compactLists(ctx context.Context, db postgres.DBTX, cfg Config, cpID string, md Metadata, channels, versions, types []string, blobs [][]byte) (written map[int]bool, err error) {
	var lists []*compactList
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
		lists = append(lists, l)
	}
	parentKey := metaKey(cfg.ThreadID, cfg.NS, cfg.CheckpointID)
	parents := maps.Clone(listMetas.get(parentKey))
	if parents == nil {
		parents = map[string]listMeta{}
	}
	var missing []string
	for _, l := range lists {
		if _, ok := parents[channels[l.idx]]; !ok && cfg.CheckpointID != "" {
			missing = append(missing, channels[l.idx])
		}
	}
	if len(missing) > 0 {
		if err := readParentLists(ctx, db, cfg, missing, parents); err != nil {
			return nil, err
		}
	}
	// Each list either extends its parent's (one statement, queued) or is
	// assembled here from known and new elements.
	metas := maps.Clone(parents)
	var extend, assemble []*compactList
	for _, l := range lists {
		var lh listHash
		p, ok := parents[channels[l.idx]]
		ok = ok && p.N > 0 && p.N <= len(l.hashes)
		for j, h := range l.hashes {
			if ok && j == p.N && !bytes.Equal(lh.h[:], p.H) {
				ok = false
			}
			lh.add(h)
		}
		if ok && p.N == len(l.hashes) && !bytes.Equal(lh.h[:], p.H) {
			ok = false
		}
		l.hash = lh.h
		l.parent = p
		if ok {
			extend = append(extend, l)
		} else {
			assemble = append(assemble, l)
		}
		metas[channels[l.idx]] = listMeta{Version: versions[l.idx], N: len(l.elems), H: lh.h[:]}
	}
	runID, step := elementOrigin(md)
	if err := assembleLists(ctx, db, cfg.ThreadID, runID, step, assemble, types, blobs); err != nil {
		return nil, err
	}
	written = map[int]bool{}
	for _, l := range extend {
		newHashes, newData := make([][]byte, 0, len(l.elems)-l.parent.N), make([][]byte, 0, len(l.elems)-l.parent.N)
		for j := l.parent.N; j < len(l.elems); j++ {
			newHashes, newData = append(newHashes, l.hashes[j][:]), append(newData, l.elems[j])
		}
		ch := channels[l.idx]
		if _, err := db.Exec(ctx, listExtendSQL, cfg.ThreadID, cfg.NS, ch, l.parent.Version, versions[l.idx],
			len(newHashes), newHashes, newData, runID, step, len(l.elems), base64.StdEncoding.EncodeToString(l.hash[:])); err != nil {
			return nil, fmt.Errorf("list %q: %w", ch, err)
		}
		written[l.idx] = true
	}
	// What this checkpoint holds: its parent's lists, with the channels it
	// wrote replaced (a value that is not a stored list forgets the entry).
	for i, ch := range channels {
		if _, isList := metas[ch]; isList && types[i] != TypeList && !written[i] {
			delete(metas, ch)
		}
	}
	listMetas.put(metaKey(cfg.ThreadID, cfg.NS, cpID), metas)
	return written, nil
}

// readParentLists adds to parents the parent checkpoint's versions of
// channels (N = -1 for a version that is not a TypeList).
func readParentLists(ctx context.Context, db postgres.DBTX, cfg Config, channels []string, parents map[string]listMeta) error {
	rows, err := db.Query(ctx, parentListsSQL, cfg.ThreadID, cfg.NS, cfg.CheckpointID, channels)
	if err != nil {
		return fmt.Errorf("parent lists: %w", err)
	}
	type parentRow struct {
		Channel string `db:"channel"`
		Version string `db:"version"`
		Blob    []byte `db:"blob"`
	}
	found, err := pgx.CollectRows(rows, pgx.RowToStructByName[parentRow])
	if err != nil {
		return fmt.Errorf("parent lists: %w", err)
	}
	for _, f := range found {
		m := listMeta{Version: f.Version, N: -1}
		if f.Blob != nil {
			h, err := parseListHeader(f.Blob)
			if err != nil {
				return fmt.Errorf("parent list %q: %w", f.Channel, err)
			}
			m.N, m.H = h.N, h.H
		}
		parents[f.Channel] = m
	}
	return nil
}

// elementOrigin is the run and step a checkpoint's metadata names: what
// the thread's message log shows for the elements it stores first.
func elementOrigin(md Metadata) (runID *string, step *int) {
	if r, ok := md["run_id"].(string); ok {
		runID = &r
	}
	if s, ok := md.Step(); ok {
		step = &s
	}
	return runID, step
}

// assembleLists stores lists that do not extend their parent's: the
// elements the thread holds already are found by hash, the rest stored as
// one new block, and each list's header (seq ranges in list order) is
// written into types/blobs.
func assembleLists(ctx context.Context, db postgres.DBTX, threadID string, runID *string, step *int, lists []*compactList, types []string, blobs [][]byte) error {
	if len(lists) == 0 {
		return nil
	}
	var lookup [][]byte
	for _, l := range lists {
		for _, h := range l.hashes {
			lookup = append(lookup, h[:])
		}
	}
	rows, err := db.Query(ctx, elementsByHashSQL, threadID, lookup)
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
	known := make(map[[32]byte]int64, len(found))
	for _, f := range found {
		known[[32]byte(f.Hash)] = f.Seq
	}
	// New elements, each stored once even when several lists hold it.
	var newHashes, newData [][]byte
	newIndex := map[[32]byte]int{}
	for _, l := range lists {
		for j, h := range l.hashes {
			if s, ok := known[h]; ok {
				l.seqs[j] = s
			} else if _, ok := newIndex[h]; !ok {
				newIndex[h] = len(newHashes)
				newHashes, newData = append(newHashes, l.hashes[j][:]), append(newData, l.elems[j])
			}
		}
	}
	if len(newHashes) > 0 {
		var last int64
		if err := db.QueryRow(ctx, elementsInsertSQL, threadID, len(newHashes), newHashes, newData, runID, step).Scan(&last); err != nil {
			return fmt.Errorf("list elements: %w", err)
		}
		first := last - int64(len(newHashes)) + 1
		for _, l := range lists {
			for j, h := range l.hashes {
				if i, ok := newIndex[h]; ok {
					l.seqs[j] = first + int64(i)
				}
			}
		}
	}
	for _, l := range lists {
		h := listHeader{N: len(l.elems), H: l.hash[:]}
		for _, s := range l.seqs {
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

// ErrElementMissing reports a TypeList header naming a seq the thread's
// element log does not hold: never silently a shorter list.
var ErrElementMissing = errors.New("list element missing from the thread's element log")

// parseListHeader decodes a TypeList blob.
func parseListHeader(blob []byte) (*listHeader, error) {
	var h listHeader
	if err := json.Unmarshal(blob, &h); err != nil {
		return nil, fmt.Errorf("%w: list header: %v", serde.ErrMalformed, err)
	}
	return &h, nil
}
