package checkpoints

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/jackc/pgx/v5/pgtype"

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
// checked once per fetched element, and whether they hold a LangChain
// envelope (decoded and rewritten on read, see decodeValue).

// builtList is a TypeList value rebuilt from the element log.
type builtList struct {
	data      []byte
	canonical bool // jsonv.Canonical(data): a response may copy data as it is
	lc        bool // data holds lcMarker: decodeValue must rewrite it
}

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
SELECT e.seq, e.data FROM unnest($2::bigint[], $3::bigint[]) AS r(lo, hi)
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
	lc           []bool // the element holds lcMarker
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
	s.plain, s.lc = make([]bool, n), make([]bool, n)
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
	var data pgtype.DriverBytes // valid until the next row: copied into the arena
	for rows.Next() {
		if err := rows.Scan(&seq, &data); err != nil {
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
		s.start[k] = len(s.arena)
		s.arena = append(s.arena, data...)
		s.end[k] = len(s.arena)
		s.arena = append(s.arena, ',')
		s.plain[k] = jsonv.Canonical(data)
		s.lc[k] = bytes.Contains(data, lcMarker)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list elements: %w", err)
	}
	return s, nil
}

// buildList is the list a header names, spliced from the fetched elements.
func buildList(h *listHeader, s *elementSet) (builtList, error) {
	out := builtList{canonical: true}
	size, n := 2, 0
	for _, r := range h.R {
		if r[1] < r[0] {
			continue
		}
		k0 := s.index(r[0])
		if k0 < 0 {
			return out, fmt.Errorf("%w: seq %d", errElementMissing, r[0])
		}
		for k := k0; k <= k0+int(r[1]-r[0]); k++ {
			if s.start[k] < 0 {
				return out, fmt.Errorf("%w: seq %d", errElementMissing, r[0]+int64(k-k0))
			}
			size += s.end[k] - s.start[k] + 1
			out.canonical = out.canonical && s.plain[k]
			out.lc = out.lc || s.lc[k]
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
	out.data = data
	return out, nil
}

// resolveLists turns TypeList rows among blobs into the "json" rows they
// stand for, reading the elements they name in one query, and returns
// each rebuilt list (nil for the other rows), indexed like types.
func resolveLists(ctx context.Context, db postgres.DBTX, threadID string, types []*string, blobs []*[]byte) ([]*builtList, error) {
	var headers []*listHeader
	var at []int
	for i, t := range types {
		if *t != TypeList {
			continue
		}
		h, err := parseListHeader(*blobs[i])
		if err != nil {
			return nil, err
		}
		headers, at = append(headers, h), append(at, i)
	}
	if len(headers) == 0 {
		return nil, nil
	}
	elems, err := fetchElements(ctx, db, threadID, headers)
	if err != nil {
		return nil, err
	}
	out := make([]*builtList, len(types))
	for k, h := range headers {
		l, err := buildList(h, elems)
		if err != nil {
			return nil, fmt.Errorf("thread %s: %w", threadID, err)
		}
		out[at[k]] = &l
		*types[at[k]], *blobs[at[k]] = serde.TypeJSON, l.data
	}
	return out, nil
}
