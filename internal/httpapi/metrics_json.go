package httpapi

import (
	"net/http"

	"github.com/weftdev/weft/internal/httpx"
)

// serveMetricsJSON answers GET /metrics?format=json: the snapshot of
// metrics.Metrics.Snapshot, or err (an unknown format: a 422).
func (s *system) serveMetricsJSON(w http.ResponseWriter, r *http.Request, err error) {
	if err != nil {
		httpx.WriteError(w, r, s.log, err)
		return
	}
	snap, err := s.snapshot(r.Context())
	if err != nil {
		httpx.WriteError(w, r, s.log, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, snap)
}
