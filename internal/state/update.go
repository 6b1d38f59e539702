package state

import (
	"github.com/weftdev/weft/internal/apperr"
)

func graphError(graphID string, known []string) error {
	if graphID == "" {
		return apperr.Errorf(apperr.BadRequest,
			"Thread has no graph: set metadata.graph_id (one of %v) or run it once before updating its state", known)
	}
	return apperr.Errorf(apperr.BadRequest, "Graph %q is not registered on this server (registered: %v)", graphID, known)
}
