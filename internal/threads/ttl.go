package threads

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/httpx"
)

// TTL strategies: what the sweeper does to a thread whose ttl ran out.
const (
	// TTLDelete deletes the thread with its runs and checkpoints (its
	// children become roots, as with DELETE's default strategy).
	TTLDelete = "delete"
	// TTLKeepLatest prunes the thread's history to its latest checkpoint and
	// keeps the thread; it expires again ttl minutes after its next activity.
	TTLKeepLatest = "keep_latest"
)

// TTL is the `ttl` field of a thread read with ?include=ttl.
type TTL struct {
	Strategy   string     `json:"strategy" enums:"delete,keep_latest" validate:"required"`
	TTLMinutes float64    `json:"ttl_minutes" validate:"required" format:"double"`
	ExpiresAt  httpx.Time `json:"expires_at" validate:"required" swaggertype:"string" format:"date-time" extensions:"x-nullable"`
}

// TTLRequest is the `ttl` of a create or patch body: minutes, or
// {"ttl": minutes, "strategy": "delete" | "keep_latest"} (the SDKs turn a
// number into the object). null or absent leaves the ttl as it is.
type TTLRequest struct {
	Set      bool    // the field was present and not null
	Minutes  float64 // > 0
	Strategy string  // TTLDelete or TTLKeepLatest
}

// UnmarshalJSON accepts both forms and validates them; a bad ttl is a 422.
func (t *TTLRequest) UnmarshalJSON(b []byte) error {
	*t = TTLRequest{}
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	var obj struct {
		TTL      *float64 `json:"ttl"`
		Strategy string   `json:"strategy"`
	}
	if len(b) > 0 && b[0] == '{' {
		if err := httpx.UnmarshalStrict(b, &obj); apperr.CodeOf(err) != "" {
			return err
		} else if err != nil {
			return ttlErr("must be {\"ttl\": minutes, \"strategy\": \"delete\" | \"keep_latest\"}")
		}
	} else {
		var n float64
		if err := json.Unmarshal(b, &n); err != nil {
			return ttlErr("must be a number of minutes or {\"ttl\": minutes, \"strategy\": ...}")
		}
		obj.TTL = &n
	}
	if obj.TTL == nil {
		return ttlErr("needs \"ttl\" (minutes)")
	}
	// The upper bound keeps now() + interval inside PostgreSQL's timestamp range.
	if m := *obj.TTL; !(m > 0) || math.IsInf(m, 0) || m > maxTTLMinutes {
		return ttlErr("is %v: minutes must be > 0 and at most %d", m, maxTTLMinutes)
	}
	switch obj.Strategy {
	case "":
		obj.Strategy = TTLDelete
	case TTLDelete, TTLKeepLatest:
	default:
		return ttlErr("has strategy %q: must be delete or keep_latest", obj.Strategy)
	}
	*t = TTLRequest{Set: true, Minutes: *obj.TTL, Strategy: obj.Strategy}
	return nil
}

func ttlErr(format string, args ...any) error {
	return &httpx.FieldError{Field: "ttl", Problem: fmt.Sprintf(format, args...)}
}

// maxTTLMinutes is 100 years.
const maxTTLMinutes = 100 * 365 * 24 * 60

// ttlArgs are the SQL arguments of a ttl: nulls when not set.
func (t TTLRequest) ttlArgs() (minutes *float64, strategy *string) {
	if !t.Set {
		return nil, nil
	}
	return &t.Minutes, &t.Strategy
}

// attachTTL fills t.TTL from its ttl columns (the ?include=ttl form).
func (t *Thread) attachTTL() {
	if t.TTLMinutes == nil || t.TTLStrategy == nil {
		return
	}
	ttl := &TTL{Strategy: *t.TTLStrategy, TTLMinutes: *t.TTLMinutes}
	if t.ExpiresAt != nil {
		ttl.ExpiresAt = httpx.Time{Time: *t.ExpiresAt}
	}
	t.TTL = ttl
}

// expiresAtSQL is the SQL expression that (re)starts a thread's ttl clock
// (null for a thread without ttl), for statements that record activity on a
// thread, such as a new run (SetRunCreated).
const expiresAtSQL = `now() + make_interval(secs => ttl_minutes * 60)`
