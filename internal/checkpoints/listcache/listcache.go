// Package listcache keeps, per process, the lists that checkpoint reads
// rebuilt from a thread's element log (the "list" blobs of
// internal/checkpoints), keyed by their content hash, least recently used
// first out.
package listcache

import (
	"bytes"
	"container/list"
	"strconv"
	"sync"
)

// Header is a stored list's header (a TypeList blob): its length N, the
// hash H of its content (the SHA-256 chain of its elements' hashes) and
// the seq ranges R of its elements in the thread's element log.
type Header struct {
	N int        `json:"n"`
	H []byte     `json:"h"`
	R [][2]int64 `json:"r"`
}

// List is a rebuilt list: its JSON text, whether that text is canonical
// (jsonv.Canonical: a response may copy it as it is), whether it holds
// a LangChain envelope marker (a read must rewrite it) and whether some
// element was rewritten from the stored one (the text is not the stored
// list's: what a read returns, not what the row holds).
type List struct {
	Data      []byte
	Canonical bool
	LC        bool
	Rewritten bool
}

// ListCacheBytes bounds the memory of the per-process cache of lists
// rebuilt from the element log (least recently used lists go first).
const ListCacheBytes = 64 << 20

// How the cache works. A list header names its list's content by hash (H: the SHA-256 chain of
// its elements' hashes), so
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

// Entry is a cached list with what identifies it.
type Entry struct {
	List
	thread, key string
	N           int
	H           []byte
	R           [][2]int64
}

// Cache is a cache of rebuilt lists (see the package doc); safe for
// concurrent use.
type Cache struct {
	mu     sync.Mutex
	max    int
	size   int
	lru    *list.List               // of *Entry, most recent first
	byKey  map[string]*list.Element //
	recent map[string][]*Entry      // per thread, its last few lists (prefix candidates)
}

// New returns an empty cache of at most max bytes of lists.
func New(max int) *Cache {
	return &Cache{max: max, lru: list.New(), byKey: map[string]*list.Element{}, recent: map[string][]*Entry{}}
}

// recentPerThread is how many of a thread's lists are prefix candidates.
const recentPerThread = 4

// cacheable reports whether a header names its content: a full hash and
// well-formed ranges.
func cacheable(h *Header) bool {
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

func listKey(thread string, h *Header) string {
	return thread + "\x00" + strconv.Itoa(h.N) + "\x00" + string(h.H)
}

// Get returns the cached list for h, or nil.
func (c *Cache) Get(thread string, h *Header) *List {
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
	return &e.Value.(*Entry).List
}

// PrefixOf returns the longest cached list of thread whose ranges begin
// h's ranges (the last one possibly shorter), with the ranges of h that
// follow it; nil when there is none.
func (c *Cache) PrefixOf(thread string, h *Header) (*Entry, [][2]int64) {
	if !cacheable(h) {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var best *Entry
	var rest [][2]int64
	for _, p := range c.recent[thread] {
		if p.N >= h.N || best != nil && p.N <= best.N || len(p.R) == 0 || len(p.R) > len(h.R) {
			continue
		}
		j := len(p.R) - 1
		ok := p.R[j][0] == h.R[j][0] && p.R[j][1] <= h.R[j][1]
		for i := 0; ok && i < j; i++ {
			ok = p.R[i] == h.R[i]
		}
		if !ok {
			continue
		}
		best, rest = p, nil
		if p.R[j][1] < h.R[j][1] {
			rest = append(rest, [2]int64{p.R[j][1] + 1, h.R[j][1]})
		}
		rest = append(rest, h.R[j+1:]...)
	}
	return best, rest
}

// Put caches l as the list of h (lists over a quarter of the cache are
// not kept).
func (c *Cache) Put(thread string, h *Header, l List) {
	if !cacheable(h) || len(l.Data) > c.max/4 {
		return
	}
	key := listKey(thread, h)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[key]; ok {
		return
	}
	cl := &Entry{List: l, thread: thread, key: key, N: h.N, H: bytes.Clone(h.H), R: append([][2]int64(nil), h.R...)}
	c.byKey[key] = c.lru.PushFront(cl)
	c.size += len(l.Data)
	rec := append(c.recent[thread], cl)
	if len(rec) > recentPerThread {
		rec = rec[len(rec)-recentPerThread:]
	}
	c.recent[thread] = rec
	for c.size > c.max {
		last := c.lru.Back()
		old := last.Value.(*Entry)
		c.lru.Remove(last)
		delete(c.byKey, old.key)
		c.size -= len(old.Data)
		c.dropRecent(old)
	}
}

// dropRecent forgets old as a prefix candidate.
func (c *Cache) dropRecent(old *Entry) {
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

// Clear forgets everything (tests).
func (c *Cache) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Init()
	c.byKey, c.recent, c.size = map[string]*list.Element{}, map[string][]*Entry{}, 0
}
