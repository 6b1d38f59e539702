package checkpoints

import (
	"bytes"
	"container/list"
	"strconv"
	"sync"
)

// ListCacheBytes bounds the memory of the per-process cache of lists
// rebuilt from the element log (least recently used lists go first).
const ListCacheBytes = 64 << 20

// The cache of rebuilt lists. A TypeList header names its list's content
// by hash (H: the SHA-256 chain of its elements' hashes, see listHash), so
// a list rebuilt once is the right value for every header of that thread
// with the same length and hash, whatever its seq ranges, checkpoint or
// version, and whatever happened to the thread since: the key is the
// content itself. Reads fill it (never puts: a list nobody reads costs no
// memory); a read of a cached list fetches no element.
//
// A list that is a cached list plus new elements (the state after one more
// turn) is rebuilt from the cached bytes and the new elements only: its
// header's ranges start with the cached list's ranges, the new elements'
// hashes (thread_elements.hash) continue the cached list's hash chain to
// the header's hash, or the cached list is not used.
var builtLists = newListCache(ListCacheBytes)

// cachedList is a rebuilt list with what identifies it.
type cachedList struct {
	builtList
	thread, key string
	n           int
	h           []byte
	r           [][2]int64
}

type listCache struct {
	mu     sync.Mutex
	max    int
	size   int
	lru    *list.List               // of *cachedList, most recent first
	byKey  map[string]*list.Element //
	recent map[string][]*cachedList // per thread, its last few lists (prefix candidates)
}

func newListCache(max int) *listCache {
	return &listCache{max: max, lru: list.New(), byKey: map[string]*list.Element{}, recent: map[string][]*cachedList{}}
}

// recentPerThread is how many of a thread's lists are prefix candidates.
const recentPerThread = 4

// cacheable reports whether a header names its content: a full hash and
// well-formed ranges.
func cacheable(h *listHeader) bool {
	if len(h.H) != 32 || h.N <= 0 {
		return false
	}
	for _, r := range h.R {
		if r[1] < r[0] {
			return false
		}
	}
	return true
}

func listKey(thread string, h *listHeader) string {
	return thread + "\x00" + strconv.Itoa(h.N) + "\x00" + string(h.H)
}

// get returns the cached list for h, or nil.
func (c *listCache) get(thread string, h *listHeader) *builtList {
	if !cacheable(h) {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[listKey(thread, h)]
	if !ok {
		return nil
	}
	c.lru.MoveToFront(e)
	return &e.Value.(*cachedList).builtList
}

// prefixOf returns the longest cached list of thread whose ranges begin
// h's ranges (the last one possibly shorter), with the ranges of h that
// follow it; nil when there is none.
func (c *listCache) prefixOf(thread string, h *listHeader) (*cachedList, [][2]int64) {
	if !cacheable(h) {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var best *cachedList
	var rest [][2]int64
	for _, p := range c.recent[thread] {
		if p.n >= h.N || best != nil && p.n <= best.n || len(p.r) == 0 || len(p.r) > len(h.R) {
			continue
		}
		j := len(p.r) - 1
		ok := p.r[j][0] == h.R[j][0] && p.r[j][1] <= h.R[j][1]
		for i := 0; ok && i < j; i++ {
			ok = p.r[i] == h.R[i]
		}
		if !ok {
			continue
		}
		best, rest = p, nil
		if p.r[j][1] < h.R[j][1] {
			rest = append(rest, [2]int64{p.r[j][1] + 1, h.R[j][1]})
		}
		rest = append(rest, h.R[j+1:]...)
	}
	return best, rest
}

// put caches l as the list of h (lists over a quarter of the cache are
// not kept).
func (c *listCache) put(thread string, h *listHeader, l builtList) {
	if !cacheable(h) || len(l.data) > c.max/4 {
		return
	}
	key := listKey(thread, h)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[key]; ok {
		return
	}
	cl := &cachedList{builtList: l, thread: thread, key: key, n: h.N, h: bytes.Clone(h.H), r: append([][2]int64(nil), h.R...)}
	c.byKey[key] = c.lru.PushFront(cl)
	c.size += len(l.data)
	rec := append(c.recent[thread], cl)
	if len(rec) > recentPerThread {
		rec = rec[len(rec)-recentPerThread:]
	}
	c.recent[thread] = rec
	for c.size > c.max {
		last := c.lru.Back()
		old := last.Value.(*cachedList)
		c.lru.Remove(last)
		delete(c.byKey, old.key)
		c.size -= len(old.data)
		c.dropRecent(old)
	}
}

// dropRecent forgets old as a prefix candidate.
func (c *listCache) dropRecent(old *cachedList) {
	t := old.thread
	rec := c.recent[t]
	for i, p := range rec {
		if p == old {
			rec = append(rec[:i:i], rec[i+1:]...)
			break
		}
	}
	if len(rec) == 0 {
		delete(c.recent, t)
	} else {
		c.recent[t] = rec
	}
}

// clear forgets everything (tests).
func (c *listCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Init()
	c.byKey, c.recent, c.size = map[string]*list.Element{}, map[string][]*cachedList{}, 0
}
