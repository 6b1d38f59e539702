package assistants

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/postgres"
)

// If-exists behaviours of Create.
const (
	IfExistsRaise     = "raise"      // an existing id is a 409 (the default)
	IfExistsDoNothing = "do_nothing" // an existing id returns that assistant unchanged
)

// CreateParams are the inputs of Create. Nil maps mean empty objects.
type CreateParams struct {
	AssistantID uuid.UUID // uuid.Nil: a new random id
	GraphID     string
	Config      map[string]any
	Context     map[string]any
	Metadata    map[string]any
	Name        string // "" → GraphID
	Description *string
	IfExists    string // "" → IfExistsRaise
}

// jsonArg encodes an object for a jsonb parameter; nil stays SQL NULL.
func jsonArg(m map[string]any) any {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("assistants: encode %T: %v", m, err)) // maps of decoded JSON always encode
	}
	return string(b)
}

// checkConfig validates a Config object: tags a list of strings,
// recursion_limit a positive integer, configurable an object (each may be
// absent or null; other keys are kept as they are).
func checkConfig(cfg map[string]any) error {
	if v, ok := cfg["tags"]; ok && v != nil {
		list, isList := v.([]any)
		if !isList {
			return apperr.Errorf(apperr.Invalid, "Invalid config.tags: must be a list of strings")
		}
		for _, t := range list {
			if _, isStr := t.(string); !isStr {
				return apperr.Errorf(apperr.Invalid, "Invalid config.tags: must be a list of strings")
			}
		}
	}
	if v, ok := cfg["recursion_limit"]; ok && v != nil {
		n, isNum := v.(json.Number)
		i, err := n.Int64()
		if !isNum || err != nil || i < 1 || i > math.MaxInt32 {
			return apperr.Errorf(apperr.Invalid, "Invalid config.recursion_limit %v: must be a positive integer", v)
		}
	}
	if v, ok := cfg["configurable"]; ok && v != nil {
		if _, isObj := v.(map[string]any); !isObj {
			return apperr.Errorf(apperr.Invalid, "Invalid config.configurable: must be an object")
		}
	}
	return nil
}

func configurableOf(cfg map[string]any) map[string]any {
	c, _ := cfg["configurable"].(map[string]any)
	return c
}

// mirror keeps config.configurable and context the same, as the Agent
// Server does: the non-empty one is copied to the other; both non-empty
// and different is a 400. It returns the (possibly new) context; cfg is
// changed in place.
func mirror(cfg, context map[string]any) (map[string]any, error) {
	conf := configurableOf(cfg)
	switch {
	case len(conf) > 0 && len(context) > 0:
		if !reflect.DeepEqual(conf, context) {
			return nil, apperr.Errorf(apperr.BadRequest,
				"Cannot specify both config.configurable and context with different values: give context alone (it replaces configurable)")
		}
	case len(conf) > 0:
		context = jsonv.Clone(conf).(map[string]any)
	case len(context) > 0:
		cfg["configurable"] = jsonv.Clone(context)
	}
	return context, nil
}

// Create creates an assistant and its version 1. The graph must be in the
// catalog (404 naming the graphs otherwise). An existing assistant id is a
// 409, or with IfExistsDoNothing returns that assistant unchanged.
func (s *Store) Create(ctx context.Context, p CreateParams) (*Assistant, error) {
	switch p.IfExists {
	case "":
		p.IfExists = IfExistsRaise
	case IfExistsRaise, IfExistsDoNothing:
	default:
		return nil, apperr.Errorf(apperr.Invalid, "Invalid if_exists %q: must be raise or do_nothing", p.IfExists)
	}
	if strings.TrimSpace(p.GraphID) == "" {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid request body: field \"graph_id\" is required")
	}
	if p.Config == nil {
		p.Config = map[string]any{}
	}
	if p.Metadata == nil {
		p.Metadata = map[string]any{}
	}
	if err := checkConfig(p.Config); err != nil {
		return nil, err
	}
	var err error
	if p.Context, err = mirror(p.Config, p.Context); err != nil {
		return nil, err
	}
	if p.Context == nil {
		p.Context = map[string]any{}
	}
	if p.Name == "" {
		p.Name = p.GraphID
	}
	if p.AssistantID == uuid.Nil {
		p.AssistantID = uuid.New()
	}
	if err := graphCheck(ctx, s.db, p.GraphID); err != nil {
		return nil, err
	}
	rows, err := s.db.Query(ctx, `WITH ins AS (
			INSERT INTO assistants (assistant_id, graph_id, name, description, config, context, metadata, tenant_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (assistant_id) DO NOTHING RETURNING *),
		v AS (`+versionInsert+`ins)
		SELECT `+columns+` FROM ins`,
		p.AssistantID, p.GraphID, p.Name, p.Description, jsonArg(p.Config), jsonArg(p.Context), jsonArg(p.Metadata), auth.Tenant(ctx))
	if err != nil {
		return nil, err
	}
	a, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Assistant])
	if errors.Is(err, pgx.ErrNoRows) {
		// The id is taken: ids are global. Only an assistant of this
		// tenant's own is returned; any other is the same 409.
		if p.IfExists == IfExistsDoNothing {
			a, err := s.Resolve(ctx, s.db, p.AssistantID.String())
			if err == nil && a.TenantID == auth.Tenant(ctx) {
				return a, nil
			}
			if err != nil && apperr.CodeOf(err) != apperr.NotFound {
				return nil, err
			}
		}
		return nil, apperr.Errorf(apperr.Conflict, "Assistant %s already exists", p.AssistantID)
	}
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// PatchParams are the inputs of Patch; nil fields stay as they are.
type PatchParams struct {
	GraphID     *string
	Config      map[string]any // replaces
	Context     map[string]any // replaces
	Metadata    map[string]any // merged shallowly into the current metadata
	Name        *string
	Description *string
}

// Patch writes a new version of the assistant ref names (max(version) + 1)
// and makes it current: p's fields replace the current ones, except
// metadata, which is merged shallowly. config.configurable and context stay
// mirrored (see mirror).
func (s *Store) Patch(ctx context.Context, ref string, p PatchParams) (*Assistant, error) {
	if p.GraphID != nil && strings.TrimSpace(*p.GraphID) == "" {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid graph_id: must not be empty")
	}
	if p.Name != nil && *p.Name == "" {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid name: must not be empty")
	}
	if p.Config != nil {
		if err := checkConfig(p.Config); err != nil {
			return nil, err
		}
	}
	var out *Assistant
	err := postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		cur, err := resolve(ctx, tx, ref, "FOR UPDATE")
		if err != nil {
			return err
		}
		if err := owned(ctx, cur); err != nil {
			return err
		}
		if p.GraphID != nil && *p.GraphID != cur.GraphID {
			if err := graphCheck(ctx, tx, *p.GraphID); err != nil {
				return err
			}
		}
		cfg, context := p.Config, p.Context
		if cfg == nil && len(context) > 0 {
			// A new context becomes the current config's configurable.
			if err := jsonv.Decode(cur.Config, &cfg); err != nil || cfg == nil {
				cfg = map[string]any{}
			}
			delete(cfg, "configurable")
		}
		if cfg != nil {
			if context, err = mirror(cfg, context); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, `WITH upd AS (
				UPDATE assistants SET graph_id = coalesce($2, graph_id), config = coalesce($3::jsonb, config),
					context = coalesce($4::jsonb, context), metadata = metadata || coalesce($5::jsonb, '{}'),
					name = coalesce($6, name), description = coalesce($7, description),
					version = (SELECT max(version) + 1 FROM assistant_versions WHERE assistant_id = $1),
					updated_at = now()
				WHERE assistant_id = $1 AND tenant_id = $8 RETURNING *),
			v AS (`+versionInsert+`upd)
			SELECT `+columns+` FROM upd`,
			cur.AssistantID, p.GraphID, jsonArg(cfg), jsonArg(context), jsonArg(p.Metadata), p.Name, p.Description, auth.Tenant(ctx))
		if err != nil {
			return err
		}
		a, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Assistant])
		out = &a
		return err
	})
	if err != nil {
		return nil, err
	}
	s.Forget(out.AssistantID)
	return out, nil
}

// SetLatest makes version the current version of the assistant ref names:
// its graph, config, context, metadata, name and description become the
// assistant's. An unknown version is a 404.
func (s *Store) SetLatest(ctx context.Context, ref string, version int) (*Assistant, error) {
	var out *Assistant
	err := postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		cur, err := resolve(ctx, tx, ref, "FOR UPDATE")
		if err != nil {
			return err
		}
		if err := owned(ctx, cur); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `UPDATE assistants a SET graph_id = v.graph_id, config = v.config,
				context = v.context, metadata = v.metadata, name = v.name, description = v.description,
				version = v.version, updated_at = now()
			FROM assistant_versions v
			WHERE a.assistant_id = $1 AND a.tenant_id = $3 AND v.assistant_id = $1 AND v.version = $2
			RETURNING `+postgres.Qualify("a", columns), cur.AssistantID, version, auth.Tenant(ctx))
		if err != nil {
			return err
		}
		a, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Assistant])
		if errors.Is(err, pgx.ErrNoRows) {
			return apperr.Errorf(apperr.NotFound, "Version %d of assistant %s not found", version, cur.AssistantID)
		}
		out = &a
		return err
	})
	if err != nil {
		return nil, err
	}
	s.Forget(out.AssistantID)
	return out, nil
}

// Versions lists the versions of the assistant ref names, newest first,
// filtered by metadata containment; more reports whether further versions
// follow the page.
func (s *Store) Versions(ctx context.Context, ref string, metadata map[string]any, limit, offset int) (list []Version, more bool, err error) {
	a, err := s.Resolve(ctx, s.db, ref)
	if err != nil {
		return nil, false, err
	}
	rows, err := s.db.Query(ctx, `SELECT `+versionColumns+` FROM assistant_versions
		WHERE assistant_id = $1 AND ($2::jsonb IS NULL OR metadata @> $2)
		ORDER BY version DESC LIMIT $3 OFFSET $4`, a.AssistantID, jsonArg(metadata), limit+1, offset)
	if err != nil {
		return nil, false, err
	}
	list, err = pgx.CollectRows(rows, pgx.RowToStructByName[Version])
	if err != nil {
		return nil, false, err
	}
	if len(list) > limit {
		return list[:limit], true, nil
	}
	return list, false, nil
}

// Delete deletes the assistant ref names with its versions. Runs already
// created keep what they copied of it; new runs naming it are a 404.
func (s *Store) Delete(ctx context.Context, ref string) error {
	id, isUUID := refID(ref)
	tag, err := s.db.Exec(ctx, `DELETE FROM assistants WHERE assistant_id = $1 AND tenant_id = $2`, id, auth.Tenant(ctx))
	if err != nil {
		return err
	}
	s.Forget(id)
	if tag.RowsAffected() == 0 {
		if a, err := s.Resolve(ctx, s.db, ref); err == nil {
			return owned(ctx, a) // a shared assistant of another tenant
		}
		if !isUUID {
			_, err := s.Resolve(ctx, s.db, ref) // the 422 listing the graphs
			return err
		}
		return apperr.Errorf(apperr.NotFound, "Assistant not found: %s", id)
	}
	return nil
}

// threadsPage returns up to limit ids, in ascending order after after, of
// the threads whose metadata names assistant id (the threads its runs
// created or ran on).
func (s *Store) threadsPage(ctx context.Context, id, after uuid.UUID, limit int) ([]uuid.UUID, error) {
	rows, err := s.db.Query(ctx, `SELECT thread_id FROM threads
		WHERE metadata @> jsonb_build_object('assistant_id', $1::text) AND thread_id > $2 AND tenant_id = $4
		ORDER BY thread_id LIMIT $3`, id.String(), after, limit, auth.Tenant(ctx))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}
