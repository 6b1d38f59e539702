package assistants

import (
	"net/http"
	"strconv"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/httpx"
)

// latestFromQuery takes POST /assistants/{id}/latest's version query
// parameter (the form LangGraph's document declares) into req: a version
// in neither the body nor the query, a query that is no integer, or a query
// and a body that differ, is a 422.
func latestFromQuery(r *http.Request, req *LatestRequest) error {
	q, given := httpx.QueryValue(r, "version")
	if !given {
		if req.Version == nil {
			return apperr.Errorf(apperr.Invalid, "Invalid request: the version is required, in the body (\"version\") or the version query parameter")
		}
		return nil
	}
	v, err := strconv.Atoi(q)
	if err != nil {
		return apperr.Errorf(apperr.Invalid, "Invalid query parameter version %q: must be an integer", q)
	}
	if req.Version != nil && *req.Version != v {
		return apperr.Errorf(apperr.Invalid, "Invalid request: the version query parameter (%d) and the body's version (%d) differ", v, *req.Version)
	}
	req.Version = &v
	return nil
}
