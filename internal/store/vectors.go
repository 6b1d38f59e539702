package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/postgres"
)

// NotifyChannel is the channel a put notifies (in its transaction) when it
// leaves texts to embed; the indexers listen on it.
const NotifyChannel = "weft_store_embed"

// vectorsSync makes an item's vector rows the fields and texts of a put
// ($3, $4): rows of fields no longer selected go; a new field, or one whose
// text changed or whose vector another model made, becomes pending (its
// claim, if any, is void: claim_token NULL fences the old write out); an
// unchanged field keeps its vector (or its place in the retry schedule).
// It returns how many rows became pending.
var vectorsSync = `
	WITH stale AS (
		DELETE FROM store_vectors v WHERE v.tenant_id = $7 AND v.namespace = $2 AND v.key = $3 AND v.field <> ALL ($4::text[])
	), pending AS (
		INSERT INTO store_vectors AS v (tenant_id, namespace, key, field, text, available_at, updated_at)
		SELECT $7, $2, $3, w.field, w.text, ` + nowSQL + `, ` + nowSQL + `
		FROM unnest($4::text[], $5::text[]) AS w(field, text) ORDER BY w.field
		ON CONFLICT (tenant_id, namespace, key, field) DO UPDATE SET
			text = EXCLUDED.text, embedding = NULL, norm = NULL, model = NULL, attempts = 0,
			available_at = EXCLUDED.available_at, claim_token = NULL, last_error = NULL, updated_at = EXCLUDED.updated_at
		WHERE v.text <> EXCLUDED.text OR v.model <> $6
		RETURNING 1
	)
	SELECT count(*) FROM pending`

// syncVectors files texts as the item's vectors and notifies the indexers
// when some are to be embedded.
func syncVectors(ctx context.Context, tx pgx.Tx, now *time.Time, tenant string, ns []string, key string, texts []fieldText, model string) error {
	fields := make([]string, len(texts))
	values := make([]string, len(texts))
	for i, t := range texts {
		fields[i], values[i] = t.Field, t.Text
	}
	var pending int
	if err := tx.QueryRow(ctx, vectorsSync, now, ns, key, fields, values, model, tenant).Scan(&pending); err != nil {
		return fmt.Errorf("store vectors: %w", err)
	}
	if pending > 0 {
		if _, err := tx.Exec(ctx, `SELECT pg_notify($1, '')`, NotifyChannel); err != nil {
			return err
		}
	}
	return nil
}

// vectorsClaim claims up to $4 due pending rows of live items: a fresh
// claim_token ($2) and available_at pushed a lease ($3 seconds) ahead, so
// that a claimer that dies gives them back when the lease runs out.
var vectorsClaim = `
	UPDATE store_vectors v SET claim_token = $2, available_at = ` + nowSQL + ` + make_interval(secs => $3)
	FROM (
		SELECT c.id FROM store_vectors c
		WHERE c.embedding IS NULL AND c.available_at <= ` + nowSQL + `
			AND EXISTS (SELECT FROM store_items s WHERE s.tenant_id = c.tenant_id AND s.namespace = c.namespace AND s.key = c.key
				AND ` + liveSQL + `)
		ORDER BY c.available_at LIMIT $4
		FOR UPDATE OF c SKIP LOCKED
	) due
	WHERE v.id = due.id
	RETURNING v.id, v.text`

// vectorsSave stores the vector of a claimed row, if the claim still holds.
var vectorsSave = `
	UPDATE store_vectors SET embedding = $3, norm = $4, model = $5, claim_token = NULL, last_error = NULL,
		updated_at = ` + nowSQL + `
	WHERE id = $2 AND claim_token = $6 AND embedding IS NULL`

// vectorsFail puts claimed rows back with attempts + 1 and a backoff of
// $4 × 2^attempts seconds (at most $5, ±25 % jitter).
var vectorsFail = `
	UPDATE store_vectors SET attempts = attempts + 1, claim_token = NULL, last_error = $3,
		available_at = ` + nowSQL + ` + make_interval(secs => least($4 * power(2, least(attempts, 30)), $5) * (0.75 + random() / 2))
	WHERE id = ANY($2) AND claim_token = $6`

// vectorsNextDue is how many seconds until the next pending row is due
// (NULL: none pending).
var vectorsNextDue = `SELECT extract(epoch FROM min(available_at) - ` + nowSQL + `)::float8 FROM store_vectors WHERE embedding IS NULL`

type claimedVector struct {
	ID   int64  `db:"id"`
	Text string `db:"text"`
}

// claimVectors claims up to n due rows under token for lease.
func (s *Store) claimVectors(ctx context.Context, token uuid.UUID, lease time.Duration, n int) ([]claimedVector, error) {
	rows, err := s.db.Query(ctx, vectorsClaim, s.now(), token, lease.Seconds(), n)
	if err != nil {
		return nil, err
	}
	claimed, err := pgx.CollectRows(rows, pgx.RowToStructByName[claimedVector])
	if err != nil {
		return nil, err
	}
	kr := crypt.FromContext(ctx)
	for i := range claimed {
		if claimed[i].Text, err = openText(kr, claimed[i].Text); err != nil {
			return nil, fmt.Errorf("store vector %d: %w", claimed[i].ID, err)
		}
	}
	return claimed, nil
}

// sealText is a text to embed as store_vectors stores it: with encryption
// on, the JSON envelope of the text as a JSON string (a fresh nonce each
// time, so a put of the same text is embedded again: the price of not
// telling equal texts apart).
func sealText(kr *crypt.Keyring, text string) string {
	if kr == nil {
		return text
	}
	b, _ := json.Marshal(text)
	return string(kr.SealJSON(b))
}

// openText reverses sealText (plain texts pass through).
func openText(kr *crypt.Keyring, stored string) (string, error) {
	if !crypt.IsEnvelope([]byte(stored)) {
		return stored, nil
	}
	b, err := kr.OpenJSON([]byte(stored))
	if err != nil {
		return "", err
	}
	var text string
	err = json.Unmarshal(b, &text)
	return text, err
}

// saveVectors stores vecs (in claimed's order) for the rows still claimed
// by token and returns how many it stored; a row put again meanwhile (new
// text, claim void) is left pending for its new text.
func (s *Store) saveVectors(ctx context.Context, token uuid.UUID, claimed []claimedVector, vecs [][]float32, model string) (int64, error) {
	var saved int64
	err := postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		saved = 0
		b := &pgx.Batch{}
		for i, c := range claimed { // claimed is in id order: rows are locked in one order
			b.Queue(vectorsSave, s.now(), c.ID, vecs[i], norm(vecs[i]), model, token)
		}
		res := tx.SendBatch(ctx, b)
		for range claimed {
			tag, err := res.Exec()
			if err != nil {
				_ = res.Close()
				return err
			}
			saved += tag.RowsAffected()
		}
		return res.Close()
	})
	return saved, err
}

// failVectors reschedules the rows of ids still claimed by token.
func (s *Store) failVectors(ctx context.Context, token uuid.UUID, ids []int64, msg string, backoff, maxBackoff time.Duration) error {
	_, err := s.db.Exec(ctx, vectorsFail, s.now(), ids, msg, backoff.Seconds(), maxBackoff.Seconds(), token)
	return err
}

// nextDue is the time until the next pending row is due (ok false: none).
func (s *Store) nextDue(ctx context.Context) (d time.Duration, ok bool, err error) {
	var secs *float64
	if err := s.db.QueryRow(ctx, vectorsNextDue, s.now()).Scan(&secs); err != nil || secs == nil {
		return 0, false, err
	}
	return time.Duration(*secs * float64(time.Second)), true, nil
}

// norm is the Euclidean norm of v, summed in float64.
func norm(v []float32) float64 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	return math.Sqrt(sum)
}

// scoreSQL is the cosine similarity of a vector row v and the query (%[1]s,
// float8[]; %[2]s its norm): e·q summed in float8 over the float4
// elements, divided by both norms; 0 when either is the zero vector. The
// two unnests in the select list walk the arrays in step (a ProjectSet,
// measured faster than unnest(a, b) in FROM, which materializes both).
const scoreSQL = `coalesce((SELECT sum(x) FROM (SELECT unnest(v.embedding)::float8 * unnest(%[1]s::float8[]) AS x) AS products)
	/ nullif(v.norm * %[2]s, 0), 0)`
