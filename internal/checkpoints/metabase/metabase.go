// Package metabase splits a checkpoint's metadata into what is its own and
// what every checkpoint of a run repeats, so that a thread stores the
// repeated part once (migration 031: table thread_checkpoint_metadata, and
// weft_checkpoint_metadata, which every read of checkpoints.metadata goes
// through and which puts a row's metadata back together).
//
// LangGraph's server puts the run's config into every checkpoint's
// metadata: thread, assistant and graph ids, the attempt, the caller, the
// thread's and the assistant's metadata and the run's configurable keys.
// On a chat they are most of a checkpoint row's metadata, three times a
// turn; kept once per thread, the metadata that history filters and
// LangGraph's own savers read is unchanged.
package metabase

import (
	"fmt"

	"github.com/zeebo/xxh3"
)

// Key is the metadata key under which a checkpoint row names its base.
const Key = "__weft_md"

// own are the keys a checkpoint row keeps itself: those of its step, and
// run_id, which differs from run to run (and which run lookups filter on).
var own = map[string]bool{"source": true, "step": true, "parents": true, "run_id": true, "writes": true,
	"counters_since_delta_snapshot": true, Key: true}

// MinBase is the least JSON a base must hold to be worth a row of its own
// and the key that names it.
const MinBase = 64

// Split divides md into the keys a checkpoint row keeps itself (its step's
// and run_id) and the rest, which every checkpoint of its run repeats
// (shared, nil when there is none).
func Split(md map[string]any) (row, shared map[string]any) {
	for k, v := range md {
		if own[k] {
			continue
		}
		if shared == nil {
			shared = map[string]any{}
			row = map[string]any{}
			for k2, v2 := range md {
				if own[k2] {
					row[k2] = v2
				}
			}
		}
		shared[k] = v
	}
	if shared == nil {
		return md, nil
	}
	return row, shared
}

// KeyOf names a base by its JSON (encoding/json's, keys sorted): equal
// bases of a thread share a row.
func KeyOf(base []byte) string {
	return fmt.Sprintf("%016x", xxh3.Hash(base))
}
