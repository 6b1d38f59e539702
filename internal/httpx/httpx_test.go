package httpx_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/httpx"
)

// A request whose client went away (its context cancelled) and whose
// handler failed because of it is a 499 logged at debug level, not an
// internal error; the same error while the client is still there stays a
// 500 logged as an internal error.
func TestWriteErrorClientGone(t *testing.T) {
	cause := fmt.Errorf("dispatch end: timeout: %w", context.Canceled)
	for _, tc := range []struct {
		name       string
		clientGone bool
		err        error
		status     int
		logged     string
	}{
		{"client gone", true, cause, httpx.StatusClientClosedRequest, "level=DEBUG msg=\"request abandoned by its client\""},
		{"client gone, deadline", true, fmt.Errorf("query: %w", context.DeadlineExceeded), httpx.StatusClientClosedRequest, "level=DEBUG"},
		{"client there", false, cause, http.StatusInternalServerError, "level=ERROR msg=\"internal error\""},
		{"client gone, other error", true, errors.New("deadlock detected"), http.StatusInternalServerError, "level=ERROR msg=\"internal error\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.clientGone {
				cancel()
			}
			r := httptest.NewRequestWithContext(ctx, "POST", "/dispatch/x/commit", nil)
			w := httptest.NewRecorder()
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			httpx.WriteError(w, r, log, tc.err)
			if w.Code != tc.status {
				t.Errorf("status %d, want %d", w.Code, tc.status)
			}
			if !strings.Contains(w.Body.String(), `"detail"`) {
				t.Errorf("body %s", w.Body)
			}
			if !strings.Contains(logs.String(), tc.logged) {
				t.Errorf("log %q, want %q in it", logs.String(), tc.logged)
			}
		})
	}
}

// A field that decodes through UnmarshalText (a uuid.UUID) and refuses its
// string is a 422 naming the field and why, at any depth, not "Invalid
// JSON"; valid and absent values decode.
func TestDecodeJSONNamesTextFields(t *testing.T) {
	type item struct {
		ID uuid.UUID `json:"id"`
	}
	type body struct {
		ClaimToken uuid.UUID   `json:"claim_token"`
		Parent     *uuid.UUID  `json:"parent"`
		Known      []uuid.UUID `json:"known"`
		Items      []item      `json:"items"`
	}
	for in, want := range map[string]string{
		`{"claim_token": ""}`:                         `field "claim_token" must be a UUID, got ""`,
		`{"claim_token": "nope"}`:                     `field "claim_token" must be a UUID, got "nope"`,
		`{"parent": "x"}`:                             `field "parent" must be a UUID, got "x"`,
		`{"known": ["` + uuid.NewString() + `", ""]}`: `field "known" must be a UUID, got ""`,
		`{"items": [{"id": "1"}]}`:                    `field "items.id" must be a UUID, got "1"`,
		`{"claim_token": "` + uuid.NewString() + `", "parent": null, "known": [], "items": [{}]}`: "",
		`{}`: "",
	} {
		var b body
		r := httptest.NewRequest("POST", "/", strings.NewReader(in))
		err := httpx.DecodeJSON(r, &b)
		var ae *apperr.Error
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", in, err)
		case want != "" && (!errors.As(err, &ae) || ae.Code != apperr.Invalid || !strings.Contains(ae.Message, want)):
			t.Errorf("%s: %v, want a 422 with %q", in, err, want)
		}
	}
}
