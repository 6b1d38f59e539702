package dev

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/store"
	"github.com/weftdev/weft/internal/threads"
)

// projectTTLs applies langgraph.json's checkpointer.ttl and store.ttl to
// the server `weft dev` runs:
//
//	"checkpointer": {"ttl": {"strategy": "delete", "default_ttl": 60, "sweep_interval_minutes": 1}}
//	"store": {"ttl": {"default_ttl": 10, "refresh_on_read": true, "sweep_interval_minutes": 1}}
//
// default_ttl (minutes) is the ttl of a thread created without one (with
// strategy delete or keep_latest) and of a store put without one;
// refresh_on_read (default true) is whether store reads push ttls forward
// unless asked not to; sweep_interval_minutes is how often expired threads
// or items are swept; checkpointer.ttl.sweep_limit is checked and not needed
// (each sweep takes every expired thread). An unknown key or a bad value stops weft dev with a
// message saying which.
func projectTTLs(raw []byte, cfg *server.Config) error {
	var file struct {
		Checkpointer *struct {
			TTL json.RawMessage `json:"ttl"`
		} `json:"checkpointer"`
		Store *struct {
			TTL json.RawMessage `json:"ttl"`
		} `json:"store"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		return fmt.Errorf("langgraph.json: %w", err)
	}
	if file.Checkpointer != nil && hasValue(file.Checkpointer.TTL) {
		var t struct {
			Strategy      *string  `json:"strategy"`
			DefaultTTL    *float64 `json:"default_ttl"`
			SweepInterval *float64 `json:"sweep_interval_minutes"`
			SweepLimit    *int     `json:"sweep_limit"` // checked; every expired thread is swept each time
		}
		if err := strictJSON(file.Checkpointer.TTL, &t); err != nil {
			return fmt.Errorf(`langgraph.json checkpointer.ttl: %w (want {"strategy": "delete", "default_ttl": minutes, "sweep_interval_minutes": minutes})`, err)
		}
		if t.SweepLimit != nil && *t.SweepLimit < 1 {
			return fmt.Errorf("langgraph.json checkpointer.ttl.sweep_limit %d: want a positive number of threads", *t.SweepLimit)
		}
		strategy := threads.TTLDelete
		if t.Strategy != nil {
			strategy = *t.Strategy
			if strategy != threads.TTLDelete && strategy != threads.TTLKeepLatest {
				return fmt.Errorf(`langgraph.json checkpointer.ttl.strategy %q: want "delete" or "keep_latest"`, strategy)
			}
		}
		if t.DefaultTTL != nil {
			if err := checkMinutes("checkpointer.ttl.default_ttl", *t.DefaultTTL); err != nil {
				return err
			}
			cfg.ThreadDefaultTTL = threads.NewTTL(*t.DefaultTTL, strategy)
		}
		if t.SweepInterval != nil {
			if err := checkMinutes("checkpointer.ttl.sweep_interval_minutes", *t.SweepInterval); err != nil {
				return err
			}
			cfg.TTLSweepInterval = minutes(*t.SweepInterval)
		}
	}
	if file.Store != nil && hasValue(file.Store.TTL) {
		var t struct {
			RefreshOnRead *bool    `json:"refresh_on_read"`
			DefaultTTL    *float64 `json:"default_ttl"`
			SweepInterval *float64 `json:"sweep_interval_minutes"`
		}
		if err := strictJSON(file.Store.TTL, &t); err != nil {
			return fmt.Errorf(`langgraph.json store.ttl: %w (want {"default_ttl": minutes, "refresh_on_read": true, "sweep_interval_minutes": minutes})`, err)
		}
		if t.DefaultTTL != nil {
			if err := checkMinutes("store.ttl.default_ttl", *t.DefaultTTL); err != nil {
				return err
			}
			if *t.DefaultTTL > store.MaxTTLMinutes {
				return fmt.Errorf("langgraph.json store.ttl.default_ttl %v: at most %d minutes", *t.DefaultTTL, store.MaxTTLMinutes)
			}
			d := *t.DefaultTTL
			cfg.StoreDefaultTTL = &d
		}
		if t.RefreshOnRead != nil {
			cfg.StoreNoRefreshOnRead = !*t.RefreshOnRead
		}
		if t.SweepInterval != nil {
			if err := checkMinutes("store.ttl.sweep_interval_minutes", *t.SweepInterval); err != nil {
				return err
			}
			cfg.StoreSweepInterval = minutes(*t.SweepInterval)
		}
	}
	return nil
}

func hasValue(raw json.RawMessage) bool {
	return len(raw) > 0 && string(bytes.TrimSpace(raw)) != "null"
}

// strictJSON decodes raw into v, refusing keys v does not have.
func strictJSON(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func checkMinutes(name string, m float64) error {
	if !(m > 0) || math.IsInf(m, 0) || m > 1e9 {
		return fmt.Errorf("langgraph.json %s %v: minutes must be a number > 0", name, m)
	}
	return nil
}

func minutes(m float64) time.Duration { return time.Duration(m * float64(time.Minute)) }
