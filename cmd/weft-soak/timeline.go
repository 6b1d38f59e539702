package main

import (
	"sync"
	"time"
)

// eventKind is what happened to the fleet.
type eventKind string

const (
	eventKill    eventKind = "kill"     // the chaos loop SIGKILLed a process
	eventStart   eventKind = "restart"  // a process incarnation started again
	eventExit    eventKind = "exit"     // a process exited without being killed
	eventPGStop  eventKind = "pg-stop"  // PostgreSQL stop began
	eventPGStart eventKind = "pg-start" // PostgreSQL answers again
)

type event struct {
	at     time.Time
	kind   eventKind
	who    string
	detail string
}

// timeline records the chaos as it happens.
type timeline struct {
	mu     sync.Mutex
	start  time.Time
	events []event
}

func (t *timeline) add(k eventKind, who, detail string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events = append(t.events, event{at: time.Now(), kind: k, who: who, detail: detail})
}

func (t *timeline) all() []event {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]event(nil), t.events...)
}

// pgDown returns when PostgreSQL went down and came back (zero when it
// did not, or not yet).
func (t *timeline) pgDown() (from, to time.Time) {
	for _, e := range t.all() {
		switch e.kind {
		case eventPGStop:
			from = e.at
		case eventPGStart:
			to = e.at
		}
	}
	return from, to
}

// duringOutage reports whether at falls in PostgreSQL's outage, widened by
// slack after it (servers reconnect their pools and listeners).
func (t *timeline) duringOutage(at time.Time, slack time.Duration) bool {
	from, to := t.pgDown()
	if from.IsZero() {
		return false
	}
	if to.IsZero() {
		return !at.Before(from)
	}
	return !at.Before(from) && !at.After(to.Add(slack))
}
