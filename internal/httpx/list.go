package httpx

import (
	"net/http"
	"slices"
	"strings"

	"github.com/weftdev/weft/internal/apperr"
)

// The paging and ordering fields of list requests (limit, offset, sort_by,
// sort_order, select) are checked here, so that every list answers a bad
// value with the same 422 message.

// MaxLimit is the largest page a list request may ask for.
const MaxLimit = 1000

// CheckLimit refuses a page size outside 1..MaxLimit:
// "Invalid limit 0: must be between 1 and 1000" (422).
func CheckLimit(n int) error {
	if n < 1 || n > MaxLimit {
		return apperr.Errorf(apperr.Invalid, "Invalid limit %d: must be between 1 and %d", n, MaxLimit)
	}
	return nil
}

// CheckOffset refuses a negative offset:
// "Invalid offset -1: must not be negative" (422).
func CheckOffset(n int) error {
	if n < 0 {
		return apperr.Errorf(apperr.Invalid, "Invalid offset %d: must not be negative", n)
	}
	return nil
}

// Limit is the page size of a request body's optional "limit": *n, or def
// when the field is absent or null, checked by CheckLimit (so an explicit
// 0 is a 422, not the default).
func Limit(n *int, def int) (int, error) {
	if n != nil {
		def = *n
	}
	return def, CheckLimit(def)
}

// QueryPage reads the query parameters limit (1..MaxLimit, default
// defLimit) and offset (0..maxOffset, default 0), with QueryInt's 422s.
func QueryPage(r *http.Request, defLimit, maxOffset int) (limit, offset int, err error) {
	if limit, err = QueryInt(r, "limit", defLimit, 1, MaxLimit); err != nil {
		return 0, 0, err
	}
	if offset, err = QueryInt(r, "offset", 0, 0, maxOffset); err != nil {
		return 0, 0, err
	}
	return limit, offset, nil
}

// Sort is what a search may be ordered by.
type Sort struct {
	// By are the sort_by values, in the order a 422 lists them (a
	// request type's enums tag: Enums[T]("SortBy")).
	By []string
	// Default is the sort_by of a request that gives none.
	Default string
}

// Check returns the order a request asks for: by (s.Default when empty)
// and order lower-cased ("desc" when empty), or a 422 naming the first of
// them that is not allowed: `Invalid sort_by "x": must be one of a, b`,
// `Invalid sort_order "X": must be asc or desc` (order quoted as given).
func (s Sort) Check(by, order string) (string, string, error) {
	if by == "" {
		by = s.Default
	}
	if !slices.Contains(s.By, by) {
		return "", "", apperr.Errorf(apperr.Invalid, "Invalid sort_by %q: must be one of %s", by, strings.Join(s.By, ", "))
	}
	switch strings.ToLower(order) {
	case "":
		return by, "desc", nil
	case "asc", "desc":
		return by, strings.ToLower(order), nil
	}
	return "", "", apperr.Errorf(apperr.Invalid, "Invalid sort_order %q: must be asc or desc", order)
}

// CheckSelect refuses a select field that is not one of allowed (a
// request type's enums tag: Enums[T]("Select")):
// `Invalid select field "x": must be one of a, b` (422).
func CheckSelect(fields, allowed []string) error {
	for _, f := range fields {
		if !slices.Contains(allowed, f) {
			return apperr.Errorf(apperr.Invalid, "Invalid select field %q: must be one of %s", f, strings.Join(allowed, ", "))
		}
	}
	return nil
}
