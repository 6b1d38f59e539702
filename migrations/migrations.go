// Package migrations embeds Weft's schema migrations (NNN_name.up.sql /
// NNN_name.down.sql, applied in order by golang-migrate).
package migrations

import "embed"

// FS holds every migration file.
//
//go:embed *.sql
var FS embed.FS
