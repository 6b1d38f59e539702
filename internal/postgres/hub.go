package postgres

import (
	"sync"

	"github.com/google/uuid"
)

// Hub wakes goroutines that wait for something about an id (a run's end,
// the growth of a run's event log): Fire signals every current
// subscriber of the id, without blocking. A subscriber's channel holds one
// signal, so a wake-up between two checks is never lost, and several
// collapse into one; waiters re-read the database after each, so a Hub
// only saves them polling. Notifications of a Listener usually drive it.
type Hub struct {
	mu   sync.Mutex
	subs map[uuid.UUID]map[chan struct{}]bool
}

// NewHub returns an empty Hub.
func NewHub() *Hub { return &Hub{subs: map[uuid.UUID]map[chan struct{}]bool{}} }

// Subscribe returns a channel that receives a signal whenever id fires,
// until Unsubscribe.
func (h *Hub) Subscribe(id uuid.UUID) chan struct{} {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[id] == nil {
		h.subs[id] = map[chan struct{}]bool{}
	}
	h.subs[id][ch] = true
	return ch
}

// SubscribeAll returns one channel that receives a signal whenever any of
// ids fires, until UnsubscribeAll with the same ids.
func (h *Hub) SubscribeAll(ids []uuid.UUID) chan struct{} {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		if h.subs[id] == nil {
			h.subs[id] = map[chan struct{}]bool{}
		}
		h.subs[id][ch] = true
	}
	return ch
}

// UnsubscribeAll stops signals of ids to ch.
func (h *Hub) UnsubscribeAll(ids []uuid.UUID, ch chan struct{}) {
	for _, id := range ids {
		h.Unsubscribe(id, ch)
	}
}

// Unsubscribe stops signals of id to ch.
func (h *Hub) Unsubscribe(id uuid.UUID, ch chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs[id], ch)
	if len(h.subs[id]) == 0 {
		delete(h.subs, id)
	}
}

// Fire signals every subscriber of id.
func (h *Hub) Fire(id uuid.UUID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[id] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// FireAll signals every subscriber of every id (after a reconnect, when
// notifications may have been missed).
func (h *Hub) FireAll() {
	h.mu.Lock()
	ids := make([]uuid.UUID, 0, len(h.subs))
	for id := range h.subs {
		ids = append(ids, id)
	}
	h.mu.Unlock()
	for _, id := range ids {
		h.Fire(id)
	}
}
