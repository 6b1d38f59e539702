// Package reencrypt rewrites every encrypted value of a Weft database under
// the keyring's current key (`weft reencrypt`): after a key rotation, the
// rows sealed with an old key (WEFT_AES_OLD_KEYS) are opened and sealed
// again, and rows written while encryption was off get sealed, so that the
// old keys can be dropped.
//
// It walks each table in primary-key order, in batches (one short
// transaction each), and writes a row back only when a value changed; each
// update is guarded by the value it read, so a row that a running server
// rewrote meanwhile (already under the current key) is left alone. It is
// therefore idempotent and resumable: a second run finds nothing to do,
// and an interrupted run is simply started again.
//
// The tables and columns are those package crypt's callers seal: checkpoint
// blobs and writes (LangGraph's "+aes" types), runs' input, command and
// result, run events, the threads' values and interrupts, store values and
// the store's texts waiting to be embedded. It knows their layout on
// purpose, as the coordinator knows several domains' tables: a rotation is
// one operation across all of them. A thread's values projection and a
// run's input stored by reference to checkpoint blobs (written while
// encryption was off) are stored whole and sealed, before the blobs
// themselves are sealed; a list stored compact (in the thread's element
// log) is rebuilt, sealed and stored whole, and the element log collected.
package reencrypt

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/postgres"
)

// Count is what a run did to one table.
type Count struct {
	Table     string `json:"table"`
	Scanned   int64  `json:"scanned"`   // rows read
	Rewritten int64  `json:"rewritten"` // rows written back under the current key
	Skipped   int64  `json:"skipped"`   // rows changed by someone else between read and write (already current)
}

// column is one value column: sql reads it (as text or bytea), cast is its
// SQL type for the update; expr, when set, is the expression whose value
// is read (sql reads it) and guards the update, in place of the column.
type column struct{ name, sql, cast, expr string }

// table is how one table is walked and resealed.
type table struct {
	name   string
	pk     []column // all read as text, compared through their cast
	cols   []column
	set    []string // further assignments of every update
	reseal func(kr *crypt.Keyring, vals [][]byte) ([][]byte, bool, error)
}

func jsonCol(name string) column { return column{name, fmt.Sprintf(`%q::text`, name), "jsonb", ""} }

func pkText(name, cast string) column { return column{name, fmt.Sprintf(`%q::text`, name), cast, ""} }

// resealBlob reseals a (type, blob) pair.
func resealBlob(kr *crypt.Keyring, vals [][]byte) ([][]byte, bool, error) {
	if vals[0] == nil || vals[1] == nil {
		return vals, false, nil // NULL type, or an "empty" value: no blob
	}
	typ, data, changed, err := kr.Reseal(string(vals[0]), vals[1])
	return [][]byte{[]byte(typ), data}, changed, err
}

// resealJSONs reseals every (whole-document) jsonb column.
func resealJSONs(kr *crypt.Keyring, vals [][]byte) ([][]byte, bool, error) {
	out := make([][]byte, len(vals))
	some := false
	for i, v := range vals {
		r, changed, err := kr.ResealJSON(v)
		if err != nil {
			return nil, false, err
		}
		out[i], some = r, some || changed
	}
	return out, some, nil
}

// threadValues is a thread's values projection whole: a projection stored
// by reference to checkpoint blobs (written while encryption was off,
// migration 023) is rendered, sealed, and stored whole. The threads go
// before checkpoint_blobs, whose rows are sealed afterwards and could no
// longer be rendered in SQL.
const threadValues = `CASE WHEN values_refs IS NULL THEN "values" ELSE weft_thread_values(thread_id, "values", values_refs) END`

// runKwargs is a run's kwargs with its input whole: an input stored by
// reference to its input checkpoint's blob (written while encryption was
// off, migration 024) is rendered, sealed, and stored whole. The runs go
// before checkpoint_blobs, for the same reason as the threads.
const runKwargs = `weft_run_input_whole(kwargs, thread_id)`

// blobType and blobValue are a checkpoint blob as LangGraph stores it: a
// list stored compact (type weft_list, a header naming the seqs of the
// thread's element log; written while encryption was off) is rebuilt, and
// sealed and stored whole; the elements are then collected (Run). SQL
// reads them as the views of schema langgraph do (weft_blob, weft_blob_type).
const (
	blobType  = `weft_blob_type(type)`
	blobValue = `weft_blob(thread_id, type, blob)`
)

// tables are every encrypted column Weft writes.
var tables = []table{
	{name: "threads",
		pk:     []column{pkText("thread_id", "uuid")},
		cols:   []column{{"values", threadValues + "::text", "jsonb", threadValues}, jsonCol("interrupts")},
		set:    []string{"values_refs = NULL"},
		reseal: resealJSONs},
	{name: "runs",
		pk:   []column{pkText("run_id", "uuid")},
		cols: []column{{"kwargs", runKwargs + "::text", "jsonb", runKwargs}, jsonCol("result")},
		reseal: func(kr *crypt.Keyring, vals [][]byte) ([][]byte, bool, error) {
			kw, c1, err := kr.ResealFields(vals[0], "input", "command")
			if err != nil {
				return nil, false, err
			}
			res, c2, err := kr.ResealJSON(vals[1])
			return [][]byte{kw, res}, c1 || c2, err
		}},
	{name: "checkpoint_blobs",
		pk: []column{pkText("thread_id", "text"), pkText("checkpoint_ns", "text"), pkText("channel", "text"), pkText("version", "text")},
		cols: []column{{"type", blobType, "text", blobType},
			{"blob", blobValue, "bytea", blobValue}},
		reseal: resealBlob},
	{name: "checkpoint_writes",
		pk: []column{pkText("thread_id", "text"), pkText("checkpoint_ns", "text"), pkText("checkpoint_id", "text"),
			pkText("task_id", "text"), pkText("idx", "integer")},
		cols:   []column{{"type", "type", "text", ""}, {"blob", "blob", "bytea", ""}},
		reseal: resealBlob},
	{name: "run_events",
		pk:     []column{pkText("run_id", "uuid"), pkText("seq", "bigint")},
		cols:   []column{jsonCol("data")},
		reseal: resealJSONs},
	{name: "store_items",
		pk:     []column{pkText("namespace", "text[]"), pkText("key", "text")},
		cols:   []column{jsonCol("value")},
		reseal: resealJSONs},
	{name: "store_vectors",
		pk:   []column{pkText("id", "bigint")},
		cols: []column{{"text", "text", "text", ""}},
		reseal: func(kr *crypt.Keyring, vals [][]byte) ([][]byte, bool, error) {
			// A text to embed is stored as the envelope of its JSON string.
			doc := vals[0]
			if !crypt.IsEnvelope(doc) {
				doc, _ = json.Marshal(string(vals[0]))
			}
			out, changed, err := kr.ResealJSON(doc)
			return [][]byte{out}, changed, err
		}},
}

// Run reseals the whole database under kr's current key, batch rows per
// transaction (default 500), reporting each table's count through progress
// (may be nil) as it finishes.
func Run(ctx context.Context, db postgres.TxStarter, kr *crypt.Keyring, batch int, progress func(Count)) ([]Count, error) {
	if kr == nil {
		return nil, fmt.Errorf("reencrypt: no key: set LANGGRAPH_AES_KEY (and the old keys in WEFT_AES_OLD_KEYS)")
	}
	if batch <= 0 {
		batch = 500
	}
	out := make([]Count, 0, len(tables)+1)
	for _, t := range tables {
		c, err := t.run(ctx, db, kr, batch)
		if err != nil {
			return out, fmt.Errorf("reencrypt %s: %w", t.name, err)
		}
		out = append(out, c)
		if progress != nil {
			progress(c)
		}
	}
	c, err := collectElements(ctx, db)
	if err != nil {
		return out, fmt.Errorf("reencrypt thread_elements: %w", err)
	}
	out = append(out, c)
	if progress != nil {
		progress(c)
	}
	return out, nil
}

// collectElements deletes the element log entries (plain text) that no
// compact list names any more, thread by thread: once every list is stored
// whole and sealed, all of them. Its count: the elements scanned and
// deleted ("rewritten").
func collectElements(ctx context.Context, db postgres.TxStarter) (Count, error) {
	c := Count{Table: "thread_elements"}
	err := postgres.WithTx(ctx, db, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM thread_elements`).Scan(&c.Scanned); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT weft_elements_collect(thread_id) FROM (SELECT DISTINCT thread_id FROM thread_elements) t`); err != nil {
			return err
		}
		var left int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM thread_elements`).Scan(&left); err != nil {
			return err
		}
		c.Rewritten = c.Scanned - left
		return nil
	})
	return c, err
}

func (t table) run(ctx context.Context, db postgres.TxStarter, kr *crypt.Keyring, batch int) (Count, error) {
	c := Count{Table: t.name}
	var sel, pkNames, pkArgs, order []string
	for i, p := range t.pk {
		sel = append(sel, p.sql)
		pkNames = append(pkNames, fmt.Sprintf("%q", p.name))
		pkArgs = append(pkArgs, fmt.Sprintf("$%d::text::%s", i+1, p.cast))
		order = append(order, fmt.Sprintf("%q", p.name))
	}
	for _, col := range t.cols {
		sel = append(sel, col.sql)
	}
	n := len(t.pk)
	first := fmt.Sprintf(`SELECT %s FROM %s ORDER BY %s LIMIT $%d`, strings.Join(sel, ", "), t.name, strings.Join(order, ", "), 1)
	next := fmt.Sprintf(`SELECT %s FROM %s WHERE (%s) > (%s) ORDER BY %s LIMIT $%d`, strings.Join(sel, ", "), t.name,
		strings.Join(pkNames, ", "), strings.Join(pkArgs, ", "), strings.Join(order, ", "), n+1)
	var set, guard []string
	for i, col := range t.cols {
		set = append(set, fmt.Sprintf("%q = %s", col.name, param(n+1+i, col.cast)))
		old := param(n+1+len(t.cols)+i, col.cast)
		read := fmt.Sprintf("%q", col.name)
		if col.expr != "" {
			read = col.expr
		}
		guard = append(guard, fmt.Sprintf("%s IS NOT DISTINCT FROM %s", read, old))
	}
	set = append(set, t.set...)
	var where []string
	for i, p := range t.pk {
		where = append(where, fmt.Sprintf("%q = $%d::text::%s", p.name, i+1, p.cast))
	}
	update := fmt.Sprintf(`UPDATE %s SET %s WHERE %s AND %s`, t.name, strings.Join(set, ", "),
		strings.Join(where, " AND "), strings.Join(guard, " AND "))

	var last []any
	for {
		done := false
		err := postgres.WithTx(ctx, db, func(tx pgx.Tx) error {
			var rows pgx.Rows
			var err error
			if last == nil {
				rows, err = tx.Query(ctx, first, batch)
			} else {
				rows, err = tx.Query(ctx, next, append(append([]any{}, last...), batch)...)
			}
			if err != nil {
				return err
			}
			type row struct {
				pk   []any
				vals [][]byte
			}
			var got []row
			for rows.Next() {
				pk := make([]string, n)
				vals := make([][]byte, len(t.cols))
				dst := make([]any, 0, n+len(t.cols))
				for i := range pk {
					dst = append(dst, &pk[i])
				}
				for i := range vals {
					dst = append(dst, &vals[i])
				}
				if err := rows.Scan(dst...); err != nil {
					rows.Close()
					return err
				}
				pkAny := make([]any, n)
				for i := range pk {
					pkAny[i] = pk[i]
				}
				got = append(got, row{pkAny, vals})
			}
			if err := rows.Err(); err != nil {
				return err
			}
			if len(got) < batch {
				done = true
			}
			b := &pgx.Batch{}
			queued := 0
			for _, r := range got {
				c.Scanned++
				out, changed, err := t.reseal(kr, r.vals)
				if err != nil {
					return fmt.Errorf("row %v: %w", r.pk, err)
				}
				if !changed {
					continue
				}
				args := append([]any{}, r.pk...)
				for i, v := range out {
					args = append(args, arg(v, t.cols[i].cast))
				}
				for i, v := range r.vals {
					args = append(args, arg(v, t.cols[i].cast))
				}
				b.Queue(update, args...)
				queued++
			}
			if queued > 0 {
				br := tx.SendBatch(ctx, b)
				for range queued {
					tag, err := br.Exec()
					if err != nil {
						br.Close()
						return err
					}
					if tag.RowsAffected() == 1 {
						c.Rewritten++
					} else {
						c.Skipped++
					}
				}
				if err := br.Close(); err != nil {
					return err
				}
			}
			if len(got) > 0 {
				last = got[len(got)-1].pk
			}
			return nil
		})
		if err != nil {
			return c, err
		}
		if done {
			return c, nil
		}
	}
}

// param is parameter i as a value of SQL type cast: bytea goes as bytes,
// everything else as text cast to its type.
func param(i int, cast string) string {
	if cast == "bytea" {
		return fmt.Sprintf("$%d::bytea", i)
	}
	return fmt.Sprintf("$%d::text::%s", i, cast)
}

// arg is a value for param (nil: NULL).
func arg(v []byte, cast string) any {
	switch {
	case v == nil:
		return nil
	case cast == "bytea":
		return v
	default:
		return string(v)
	}
}
