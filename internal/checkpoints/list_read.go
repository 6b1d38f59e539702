package checkpoints

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/weftdev/weft/internal/checkpoints/listcache"
	"github.com/weftdev/weft/internal/checkpoints/serde"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/postgres"
)

// Reading TypeList values: a read collects the headers of every list it
// returns (a page of history, a state), fetches the union of their seq
// ranges in one query (elements the lists share are fetched once), and
// splices each list's JSON from the fetched bytes: '[' + elements joined
// by ',' + ']', no decoding. Every element row was split from a list by
// splitList, which validated it as JSON, so a rebuilt list is valid JSON
// without a re-scan; what a response still needs to know is whether the
// bytes are already what encoding/json writes (jsonv.Canonical), which is
// checked once per fetched element. An element holding a LangChain
// envelope (a Python or JS message as LangGraph's savers write it) is
// rewritten once, as it is fetched, into what a read returns (see
// decodeValue), so a cached list is read back without decoding; a list
// still holding an envelope after that (serde.NormalizeLC leaves some) is
// decoded on every read.

// builtList is a TypeList value rebuilt from the element log.
type builtList = listcache.List

// builtLists is the process's cache of rebuilt lists.
var builtLists = listcache.New(listcache.ListCacheBytes)

// listRanges is the union of the seq ranges a set of headers name, as
// sorted, non-overlapping ranges.
func listRanges(headers []*listHeader) (lo, hi []int64) {
	var all [][2]int64
	for _, h := range headers {
		for _, r := range h.R {
			if r[0] <= r[1] {
				all = append(all, r)
			}
		}
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
SELECT e.seq, e.hash, e.data FROM unnest($2::bigint[], $3::bigint[]) AS r(lo, hi)
JOIN thread_elements e ON e.thread_id = $1 AND e.seq BETWEEN r.lo AND r.hi`

// elementSet is the elements of a set of merged seq ranges, fetched once:
// the element at index k (seq lo[i] + k - base[i] for the range i holding
// it) is arena[start[k]:end[k]], or missing when start[k] < 0. Elements
// are stored in the arena in the order they arrive, each followed by ',',
// so a run of elements that arrived in seq order is one slice of it.
type elementSet struct {
	lo, hi, base []int64
	arena        []byte
	start, end   []int
	plain        []bool // the element is jsonv.Canonical
	lc           []bool // the element holds serde.LCMarker
	rewritten    []bool // the element is not the stored one (normalizedElement)
	hash         [][32]byte
}

// index returns the index of seq in the set, or -1.
func (s *elementSet) index(seq int64) int {
	i := sort.Search(len(s.hi), func(i int) bool { return s.hi[i] >= seq })
	if i == len(s.hi) || seq < s.lo[i] {
		return -1
	}
	return int(s.base[i] + seq - s.lo[i])
}

// fetchElements reads, in one query, every element the headers name.
func fetchElements(ctx context.Context, db postgres.DBTX, threadID string, headers []*listHeader) (*elementSet, error) {
	s := &elementSet{}
	s.lo, s.hi = listRanges(headers)
	n := int64(0)
	for i := range s.lo {
		s.base = append(s.base, n)
		n += s.hi[i] - s.lo[i] + 1
	}
	s.start, s.end = make([]int, n), make([]int, n)
	s.plain, s.lc, s.rewritten, s.hash = make([]bool, n), make([]bool, n), make([]bool, n), make([][32]byte, n)
	for k := range s.start {
		s.start[k] = -1
	}
	if n == 0 {
		return s, nil
	}
	rows, err := db.Query(ctx, elementsByRangesSQL, threadID, s.lo, s.hi)
	if err != nil {
		return nil, fmt.Errorf("list elements: %w", err)
	}
	defer rows.Close()
	var seq int64
	var hash, data pgtype.DriverBytes // valid until the next row: copied
	for rows.Next() {
		if err := rows.Scan(&seq, &hash, &data); err != nil {
			return nil, fmt.Errorf("list elements: %w", err)
		}
		k := s.index(seq)
		if k < 0 {
			continue
		}
		if s.arena == nil {
			// The first row's size times the count (one allocation for
			// lists of similar elements), within reason.
			s.arena = make([]byte, 0, min(int(n)*(len(data)+1), 16<<20))
		}
		elem := []byte(data)
		lc, rewritten := bytes.Contains(elem, serde.LCMarker), false
		if lc {
			if n, ok := normalizedElement(elem); ok {
				elem, lc, rewritten = n, bytes.Contains(n, serde.LCMarker), true
			}
		}
		s.start[k] = len(s.arena)
		s.arena = append(s.arena, elem...)
		s.end[k] = len(s.arena)
		s.arena = append(s.arena, ',')
		s.plain[k] = jsonv.Canonical(elem)
		s.lc[k], s.rewritten[k] = lc, rewritten
		copy(s.hash[k][:], hash) // of the element as stored: the list's hash chain
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list elements: %w", err)
	}
	return s, nil
}

// normalizedElement is an element holding a LangChain envelope as a read
// returns it: decoded, rewritten (serde.NormalizeLC, which rewrites a
// list element by element) and encoded again; ok is false when it does not
// decode (decodeValue reports it when the list is read).
func normalizedElement(data []byte) ([]byte, bool) {
	v, err := serde.Decode(serde.TypeJSON, data)
	if err != nil {
		return nil, false
	}
	out, err := jsonv.AppendMarshal(nil, serde.NormalizeLC(v))
	return out, err == nil
}

// buildList is the list a header names, spliced from the fetched elements.
func buildList(h *listHeader, s *elementSet) (builtList, error) {
	out := builtList{Canonical: true}
	size, n := 2, 0
	for _, r := range h.R {
		if r[1] < r[0] {
			continue
		}
		k0 := s.index(r[0])
		if k0 < 0 {
			return out, fmt.Errorf("%w: seq %d", ErrElementMissing, r[0])
		}
		for k := k0; k <= k0+int(r[1]-r[0]); k++ {
			if s.start[k] < 0 {
				return out, fmt.Errorf("%w: seq %d", ErrElementMissing, r[0]+int64(k-k0))
			}
			size += s.end[k] - s.start[k] + 1
			out.Canonical = out.Canonical && s.plain[k]
			out.LC = out.LC || s.lc[k]
			out.Rewritten = out.Rewritten || s.rewritten[k]
			n++
		}
	}
	if n != h.N {
		return out, fmt.Errorf("%w: list header counts %d elements, ranges name %d", serde.ErrMalformed, h.N, n)
	}
	data := make([]byte, 0, size)
	data = append(data, '[')
	for _, r := range h.R {
		if r[1] < r[0] {
			continue
		}
		k0 := s.index(r[0])
		k1 := k0 + int(r[1]-r[0])
		// Copy runs of elements that lie side by side in the arena (with
		// their separating commas) in one piece.
		for k := k0; k <= k1; {
			j := k
			for j < k1 && s.start[j+1] == s.end[j]+1 {
				j++
			}
			data = append(data, s.arena[s.start[k]:s.end[j]+1]...) // with the ',' after it
			k = j + 1
		}
	}
	if n == 0 {
		data = append(data, ']')
	} else {
		data[len(data)-1] = ']' // the last element's ','
	}
	out.Data = data
	return out, nil
}

// extendList is cached list p followed by the elements of ranges rest,
// when those elements' hashes continue p's hash chain to h's hash (then
// the result is h's list); ok is false otherwise, or when an element is
// missing from s.
func extendList(p *listcache.Entry, h *listHeader, rest [][2]int64, s *elementSet) (out builtList, ok bool) {
	lh := listHash{}
	copy(lh.h[:], p.H)
	size, n := len(p.Data), p.N
	out = builtList{Canonical: p.Canonical, LC: p.LC, Rewritten: p.Rewritten}
	for _, r := range rest {
		k0 := s.index(r[0])
		if k0 < 0 {
			return out, false
		}
		for k := k0; k <= k0+int(r[1]-r[0]); k++ {
			if s.start[k] < 0 {
				return out, false
			}
			lh.add(s.hash[k])
			size += s.end[k] - s.start[k] + 1
			out.Canonical = out.Canonical && s.plain[k]
			out.LC = out.LC || s.lc[k]
			out.Rewritten = out.Rewritten || s.rewritten[k]
			n++
		}
	}
	if n != h.N || !bytes.Equal(lh.h[:], h.H) {
		return out, false
	}
	data := make([]byte, 0, size)
	data = append(data, p.Data[:len(p.Data)-1]...) // without its ']'
	for _, r := range rest {
		k0 := s.index(r[0])
		for k := k0; k <= k0+int(r[1]-r[0]); k++ {
			data = append(append(data, ','), s.arena[s.start[k]:s.end[k]]...)
		}
	}
	out.Data = append(data, ']')
	return out, true
}

// resolveLists turns TypeList rows among blobs into the "json" rows they
// stand for and returns each rebuilt list (nil for the other rows),
// indexed like types. Lists in the cache (builtLists) cost nothing; the
// others are rebuilt from the elements they name, fetched in one query
// for all of them (a list that extends a cached one fetches only its new
// elements), and cached.
func resolveLists(ctx context.Context, db postgres.DBTX, threadID string, types []*string, blobs []*[]byte) ([]*builtList, error) {
	var out []*builtList
	type miss struct {
		at     int
		h      *listHeader
		prefix *listcache.Entry
		rest   [][2]int64
	}
	var misses []miss
	for i, t := range types {
		if *t != TypeList {
			continue
		}
		h, err := parseListHeader(*blobs[i])
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = make([]*builtList, len(types))
		}
		if l := builtLists.Get(threadID, h); l != nil {
			out[i] = l
			*types[i], *blobs[i] = serde.TypeJSON, l.Data
			continue
		}
		m := miss{at: i, h: h}
		m.prefix, m.rest = builtLists.PrefixOf(threadID, h)
		misses = append(misses, m)
	}
	if len(misses) == 0 {
		return out, nil
	}
	need := make([]*listHeader, len(misses))
	for k, m := range misses {
		need[k] = m.h
		if m.prefix != nil {
			need[k] = &listHeader{R: m.rest}
		}
	}
	elems, err := fetchElements(ctx, db, threadID, need)
	if err != nil {
		return nil, err
	}
	var whole []*listHeader // lists whose cached prefix did not check out
	var wholeAt []int
	for _, m := range misses {
		var l builtList
		if m.prefix != nil {
			var ok bool
			if l, ok = extendList(m.prefix, m.h, m.rest, elems); !ok {
				whole, wholeAt = append(whole, m.h), append(wholeAt, m.at)
				continue
			}
		} else if l, err = buildList(m.h, elems); err != nil {
			return nil, fmt.Errorf("thread %s: %w", threadID, err)
		}
		builtLists.Put(threadID, m.h, l)
		out[m.at] = &l
		*types[m.at], *blobs[m.at] = serde.TypeJSON, l.Data
	}
	if len(whole) > 0 {
		if elems, err = fetchElements(ctx, db, threadID, whole); err != nil {
			return nil, err
		}
		for k, h := range whole {
			l, err := buildList(h, elems)
			if err != nil {
				return nil, fmt.Errorf("thread %s: %w", threadID, err)
			}
			builtLists.Put(threadID, h, l)
			out[wholeAt[k]] = &l
			*types[wholeAt[k]], *blobs[wholeAt[k]] = serde.TypeJSON, l.Data
		}
	}
	return out, nil
}
