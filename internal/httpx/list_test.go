package httpx_test

import (
	"net/http/httptest"
	"testing"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/httpx"
)

// wantInvalid checks that err is a 422 with exactly message want, or nil
// when want is "".
func wantInvalid(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("err = %v, want none", err)
		}
		return
	}
	if err == nil || err.Error() != want || apperr.CodeOf(err) != apperr.Invalid {
		t.Fatalf("err = %v (code %q), want 422 %q", err, apperr.CodeOf(err), want)
	}
}

func ptr(n int) *int { return &n }

func TestListParams(t *testing.T) {
	t.Run("limit", func(t *testing.T) {
		for _, tc := range []struct {
			n    *int
			want int
			err  string
		}{
			{nil, 10, ""},
			{ptr(1), 1, ""},
			{ptr(1000), 1000, ""},
			{ptr(0), 0, "Invalid limit 0: must be between 1 and 1000"},
			{ptr(-3), 0, "Invalid limit -3: must be between 1 and 1000"},
			{ptr(1001), 0, "Invalid limit 1001: must be between 1 and 1000"},
		} {
			got, err := httpx.Limit(tc.n, 10)
			wantInvalid(t, err, tc.err)
			if tc.err == "" && got != tc.want {
				t.Errorf("Limit(%v) = %d, want %d", tc.n, got, tc.want)
			}
		}
		wantInvalid(t, httpx.CheckLimit(1000), "")
		wantInvalid(t, httpx.CheckLimit(0), "Invalid limit 0: must be between 1 and 1000")
	})
	t.Run("offset", func(t *testing.T) {
		wantInvalid(t, httpx.CheckOffset(0), "")
		wantInvalid(t, httpx.CheckOffset(1<<40), "")
		wantInvalid(t, httpx.CheckOffset(-1), "Invalid offset -1: must not be negative")
	})
	t.Run("query page", func(t *testing.T) {
		for _, tc := range []struct {
			query         string
			limit, offset int
			err           string
		}{
			{"", 20, 0, ""},
			{"?limit=5&offset=7", 5, 7, ""},
			{"?limit=0", 0, 0, `Invalid query parameter limit "0": must be an integer between 1 and 1000`},
			{"?limit=", 0, 0, `Invalid query parameter limit "": must be an integer between 1 and 1000`},
			{"?offset=-1", 0, 0, `Invalid query parameter offset "-1": must be an integer between 0 and 100`},
			{"?offset=101", 0, 0, `Invalid query parameter offset "101": must be an integer between 0 and 100`},
		} {
			limit, offset, err := httpx.QueryPage(httptest.NewRequest("GET", "/x"+tc.query, nil), 20, 100)
			wantInvalid(t, err, tc.err)
			if tc.err == "" && (limit != tc.limit || offset != tc.offset) {
				t.Errorf("%s: limit, offset = %d, %d, want %d, %d", tc.query, limit, offset, tc.limit, tc.offset)
			}
		}
	})
	t.Run("sort", func(t *testing.T) {
		s := httpx.Sort{By: []string{"id", "name", "created_at"}, Default: "created_at"}
		for _, tc := range []struct {
			by, order         string
			wantBy, wantOrder string
			err               string
		}{
			{"", "", "created_at", "desc", ""},
			{"name", "asc", "name", "asc", ""},
			{"id", "DESC", "id", "desc", ""},
			{"Name", "asc", "", "", `Invalid sort_by "Name": must be one of id, name, created_at`},
			{"nope", "sideways", "", "", `Invalid sort_by "nope": must be one of id, name, created_at`},
			{"id", "Sideways", "", "", `Invalid sort_order "Sideways": must be asc or desc`},
			{"", " asc", "", "", `Invalid sort_order " asc": must be asc or desc`},
		} {
			by, order, err := s.Check(tc.by, tc.order)
			wantInvalid(t, err, tc.err)
			if tc.err == "" && (by != tc.wantBy || order != tc.wantOrder) {
				t.Errorf("Check(%q, %q) = %q, %q, want %q, %q", tc.by, tc.order, by, order, tc.wantBy, tc.wantOrder)
			}
		}
	})
	t.Run("select", func(t *testing.T) {
		allowed := []string{"a", "b"}
		wantInvalid(t, httpx.CheckSelect(nil, allowed), "")
		wantInvalid(t, httpx.CheckSelect([]string{"b", "a"}, allowed), "")
		wantInvalid(t, httpx.CheckSelect([]string{"a", "c", "d"}, allowed), `Invalid select field "c": must be one of a, b`)
	})
}
