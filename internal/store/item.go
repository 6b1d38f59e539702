package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/httpx"
)

// Item is a stored item as the API returns it.
type Item struct {
	Namespace []string        `json:"namespace" validate:"required" db:"namespace" example:"users,u1,memories"`
	Key       string          `json:"key" validate:"required" db:"key" example:"favourite-colour"`
	Value     json.RawMessage `json:"value" validate:"required" db:"value" swaggertype:"object"`
	CreatedAt httpx.Time      `json:"created_at" validate:"required" db:"created_at" swaggertype:"string" format:"date-time"`
	UpdatedAt httpx.Time      `json:"updated_at" validate:"required" db:"updated_at" swaggertype:"string" format:"date-time"`
}

// SearchItem is an Item in search results. Score is the cosine similarity
// of the item's best indexed field to the query (-1..1) in a semantic
// search, and null otherwise (listing, text match, no index).
type SearchItem struct {
	Item
	// Score is the cosine similarity (-1..1) of the item's best indexed
	// field to the query in a semantic search; null otherwise.
	Score *float64 `json:"score" validate:"required" db:"score" extensions:"x-nullable"`
}

// Limits on names, so that a namespace and key always fit in the primary key
// and ns_path btree entries (PostgreSQL refuses index entries over ~2.7 kB).
const (
	MaxLabels        = 64   // labels in a namespace
	MaxNamespaceSize = 1024 // bytes of a namespace, labels joined by "."
	MaxKeySize       = 1024 // bytes of a key
)

// MaxTTLMinutes bounds a ttl (100 years), keeping expires_at inside
// PostgreSQL's timestamp range.
const MaxTTLMinutes = 100 * 365 * 24 * 60

// wildcard matches any one label in the prefix and suffix of a namespace
// listing (as LangGraph's stores do).
const wildcard = "*"

// checkNamespace validates the labels of a namespace named field: non-empty,
// without ".", valid UTF-8 without NUL characters, within the size limits.
// An empty namespace is allowed only when allowEmpty.
func checkNamespace(field string, ns []string, allowEmpty bool) error {
	if len(ns) == 0 {
		if allowEmpty {
			return nil
		}
		return apperr.Errorf(apperr.Invalid, "Invalid %s: a namespace needs at least one label", field)
	}
	if len(ns) > MaxLabels {
		return apperr.Errorf(apperr.Invalid, "Invalid %s: %d labels, at most %d are allowed", field, len(ns), MaxLabels)
	}
	size := len(ns) - 1
	for i, label := range ns {
		if label == "" || strings.Contains(label, ".") {
			return apperr.Errorf(apperr.Invalid, "Invalid %s: namespace labels cannot be empty or contain periods, got %q at position %d", field, label, i)
		}
		if err := checkText(field, label); err != nil {
			return err
		}
		size += len(label)
	}
	if size > MaxNamespaceSize {
		return apperr.Errorf(apperr.Invalid, "Invalid %s: %d bytes, at most %d are allowed", field, size, MaxNamespaceSize)
	}
	return nil
}

// checkKey validates an item key: non-empty, valid UTF-8 without NUL
// characters, at most MaxKeySize bytes.
func checkKey(key string) error {
	if key == "" {
		return apperr.Errorf(apperr.Invalid, "Invalid key: must be a non-empty string")
	}
	if len(key) > MaxKeySize {
		return apperr.Errorf(apperr.Invalid, "Invalid key: %d bytes, at most %d are allowed", len(key), MaxKeySize)
	}
	return checkText("key", key)
}

// checkText refuses what PostgreSQL's text cannot hold (query parameters
// have not been through the body checks).
func checkText(field, s string) error {
	if !utf8.ValidString(s) {
		return apperr.Errorf(apperr.Invalid, "Invalid %s: not valid UTF-8", field)
	}
	if strings.ContainsRune(s, 0) {
		return apperr.Errorf(apperr.Invalid, "Invalid %s: contains a NUL character", field)
	}
	return nil
}

// nsPath is the ns_path of a namespace (labels joined and ended by ".").
func nsPath(ns []string) string {
	if len(ns) == 0 {
		return ""
	}
	return strings.Join(ns, ".") + "."
}

// prefixRange returns the ns_path range [lo, hi) of the namespaces that start
// with the labels of prefix; both are "" for the empty prefix (everything).
func prefixRange(prefix []string) (lo, hi string) {
	if len(prefix) == 0 {
		return "", ""
	}
	lo = nsPath(prefix)
	return lo, lo[:len(lo)-1] + "/" // '/' follows '.' in byte order
}

// open decrypts the item's value when it was stored encrypted (package
// crypt; plaintext rows pass through).
func (it *Item) open(ctx context.Context) error {
	v, err := crypt.FromContext(ctx).OpenJSON(it.Value)
	if err != nil {
		return fmt.Errorf("store item %q: %w", it.Key, err)
	}
	it.Value = v
	return nil
}
