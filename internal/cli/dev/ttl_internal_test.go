package dev

import (
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/threads"
)

func TestProjectTTLs(t *testing.T) {
	t.Parallel()
	var cfg server.Config
	err := projectTTLs([]byte(`{"graphs": {},
		"checkpointer": {"ttl": {"strategy": "keep_latest", "default_ttl": 60, "sweep_interval_minutes": 2, "sweep_limit": 100}},
		"store": {"ttl": {"refresh_on_read": false, "default_ttl": 10.5, "sweep_interval_minutes": 0.5}}}`), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ThreadDefaultTTL != threads.NewTTL(60, threads.TTLKeepLatest) {
		t.Errorf("thread default ttl = %+v", cfg.ThreadDefaultTTL)
	}
	if cfg.TTLSweepInterval != 2*time.Minute || cfg.StoreSweepInterval != 30*time.Second {
		t.Errorf("sweeps = %v, %v", cfg.TTLSweepInterval, cfg.StoreSweepInterval)
	}
	if cfg.StoreDefaultTTL == nil || *cfg.StoreDefaultTTL != 10.5 || !cfg.StoreNoRefreshOnRead {
		t.Errorf("store ttl = %v, no refresh %v", cfg.StoreDefaultTTL, cfg.StoreNoRefreshOnRead)
	}

	// The strategy defaults to delete; refresh_on_read to true; nothing set
	// leaves the server's defaults.
	cfg = server.Config{}
	if err := projectTTLs([]byte(`{"checkpointer": {"ttl": {"default_ttl": 1}}, "store": {"ttl": {}}}`), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.ThreadDefaultTTL != threads.NewTTL(1, threads.TTLDelete) || cfg.StoreDefaultTTL != nil ||
		cfg.StoreNoRefreshOnRead || cfg.TTLSweepInterval != 0 || cfg.StoreSweepInterval != 0 {
		t.Errorf("defaults: %+v", cfg)
	}
	cfg = server.Config{}
	if err := projectTTLs([]byte(`{"checkpointer": {"ttl": null}, "store": {"index": {"dims": 1}}}`), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.ThreadDefaultTTL.Set {
		t.Error("a null ttl set a default")
	}

	for raw, want := range map[string]string{
		`{"checkpointer": {"ttl": {"strategy": "archive"}}}`:        `strategy "archive"`,
		`{"checkpointer": {"ttl": {"default_ttl": 0}}}`:             "default_ttl 0",
		`{"checkpointer": {"ttl": {"default_ttl": "60"}}}`:          "checkpointer.ttl",
		`{"checkpointer": {"ttl": {"default_tll": 60}}}`:            `unknown field "default_tll"`,
		`{"checkpointer": {"ttl": {"sweep_interval_minutes": -1}}}`: "sweep_interval_minutes -1",
		`{"store": {"ttl": {"default_ttl": -5}}}`:                   "store.ttl.default_ttl -5",
		`{"store": {"ttl": {"default_ttl": 1e12}}}`:                 "store.ttl.default_ttl",
		`{"store": {"ttl": {"refresh_on_read": "yes"}}}`:            "store.ttl",
		`{"store": {"ttl": {"refresh": true}}}`:                     `unknown field "refresh"`,
		`{"checkpointer": {"ttl": {"sweep_limit": 0}}}`:             "sweep_limit 0",
		`{"store": {"ttl": [1]}}`:                                   "store.ttl",
	} {
		cfg = server.Config{}
		err := projectTTLs([]byte(raw), &cfg)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one saying %q", raw, err, want)
		}
	}
}
