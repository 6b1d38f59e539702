package assistants

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/wire"
)

// Graph sources in the catalog.
const (
	SourceBuiltin = "builtin" // compiled into this server (builtin.Graphs or the embedder's registry)
	// SourceWorker marks a graph an external worker registered (POST
	// /dispatch/graphs): its runs are executed only by workers that claim
	// its graph id, never by the in-process pool, which claims only the
	// graphs compiled into the binary.
	SourceWorker = "worker"
)

// SubgraphSchemas are the JSON Schemas of one subgraph, the value of each
// namespace in GET /assistants/{id}/subgraphs: wire.SubgraphSchemas, as a
// worker registers them.
type SubgraphSchemas = wire.SubgraphSchemas

// GraphInfo is one graph of the catalog: what the assistant routes tell
// about a graph without running it.
type GraphInfo struct {
	GraphID string
	// Drawable is the drawing without subgraphs expanded ({nodes, edges},
	// graph.Graph.Drawable's shape).
	Drawable any
	// XrayDrawables are the drawings with subgraphs expanded, element i to
	// depth i + 1; empty when the graph has no subgraphs.
	XrayDrawables []any
	// Subgraphs maps namespaces (nested ones joined with "|") to their
	// schemas; empty when the graph has none.
	Subgraphs map[string]SubgraphSchemas
	// Schemas are the graph's own JSON Schemas.
	Schemas SubgraphSchemas
	// Source says who registered the graph (SourceBuiltin).
	Source string
	// ChannelDefaults are what state channels read as while unset (only
	// channels with a default), for graphs the server has no definition
	// of: a worker's graph shows them in its state reads.
	ChannelDefaults map[string]any
	// ChannelKinds marks the state channels a worker's runtime keeps as
	// LangGraph delta channels: channel → "delta:messages" (rebuilt by
	// state reads) or "delta" (another reducer; reads mark it unresolved).
	// See graph.Channel.Delta.
	ChannelKinds map[string]string
	// Language is graph.Graph.Language of a worker's graph ("" or
	// graph.LanguagePython).
	Language string
}

// InfoOf describes a built-in graph for the catalog.
func InfoOf(g *graph.Graph) GraphInfo {
	s := g.Schemas()
	defaults := map[string]any{}
	for _, c := range g.Channels {
		if c.Default != nil {
			defaults[c.Name] = c.Default
		}
	}
	return GraphInfo{GraphID: g.ID, Drawable: g.Drawable(), Source: SourceBuiltin, ChannelDefaults: defaults,
		Schemas: SubgraphSchemas{InputSchema: s.Input, OutputSchema: s.Output, StateSchema: s.State,
			ConfigSchema: s.Config, ContextSchema: s.Context}}
}

// GraphUpsert adds g to the catalog or replaces its entry.
func GraphUpsert(ctx context.Context, db postgres.DBTX, g GraphInfo) error {
	if g.GraphID == "" {
		return errors.New("graph catalog: empty graph id")
	}
	if g.Source == "" {
		g.Source = SourceBuiltin
	}
	xray := g.XrayDrawables
	if xray == nil {
		xray = []any{}
	}
	sub := g.Subgraphs
	if sub == nil {
		sub = map[string]SubgraphSchemas{}
	}
	defaults := g.ChannelDefaults
	if defaults == nil {
		defaults = map[string]any{}
	}
	kinds := g.ChannelKinds
	if kinds == nil {
		kinds = map[string]string{}
	}
	enc := func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	}
	args := []any{g.GraphID, g.Source, g.Language}
	for _, v := range []any{g.Drawable, xray, sub, g.Schemas.InputSchema, g.Schemas.OutputSchema,
		g.Schemas.StateSchema, g.Schemas.ConfigSchema, g.Schemas.ContextSchema, defaults, kinds} {
		s, err := enc(v)
		if err != nil {
			return fmt.Errorf("graph catalog: encode %s: %w", g.GraphID, err)
		}
		args = append(args, s)
	}
	_, err := db.Exec(ctx, `INSERT INTO graphs (graph_id, source, drawable, xray_drawables, subgraphs,
			input_schema, output_schema, state_schema, config_schema, context_schema, channel_defaults, channel_kinds, language)
		VALUES ($1, $2, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $3)
		ON CONFLICT (graph_id) DO UPDATE SET source = EXCLUDED.source, drawable = EXCLUDED.drawable,
			xray_drawables = EXCLUDED.xray_drawables, subgraphs = EXCLUDED.subgraphs,
			input_schema = EXCLUDED.input_schema, output_schema = EXCLUDED.output_schema,
			state_schema = EXCLUDED.state_schema, config_schema = EXCLUDED.config_schema,
			context_schema = EXCLUDED.context_schema, channel_defaults = EXCLUDED.channel_defaults,
			channel_kinds = EXCLUDED.channel_kinds, language = EXCLUDED.language, updated_at = now()`, args...)
	if err != nil {
		return fmt.Errorf("graph catalog: upsert %s: %w", g.GraphID, err)
	}
	return nil
}

// RegisterBuiltin upserts every graph of reg into the catalog, in one
// transaction.
func RegisterBuiltin(ctx context.Context, db postgres.TxStarter, reg *graph.Registry) error {
	return postgres.WithTx(ctx, db, func(tx pgx.Tx) error {
		for _, id := range reg.IDs() {
			g, _ := reg.Lookup(id)
			if err := GraphUpsert(ctx, tx, InfoOf(g)); err != nil {
				return err
			}
		}
		return nil
	})
}

// GraphIDs lists the catalog's graph ids in ascending order.
func GraphIDs(ctx context.Context, db postgres.DBTX) ([]string, error) {
	rows, err := db.Query(ctx, `SELECT graph_id FROM graphs ORDER BY graph_id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// graphNotFound is the 404 for a graph id the catalog does not hold, in
// the Agent Server's wording.
func graphNotFound(ctx context.Context, db postgres.DBTX, graphID string) error {
	ids, err := GraphIDs(ctx, db)
	if err != nil {
		return err
	}
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = "'" + id + "'"
	}
	return apperr.Errorf(apperr.NotFound, "Graph '%s' not found. Expected one of: [%s]", graphID, strings.Join(q, ", "))
}

// graphCheck is nil when the catalog holds graphID, and graphNotFound
// otherwise.
func graphCheck(ctx context.Context, db postgres.DBTX, graphID string) error {
	var ok bool
	if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM graphs WHERE graph_id = $1)`, graphID).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return graphNotFound(ctx, db, graphID)
	}
	return nil
}

// catalogRow is a graph's catalog entry as stored.
type catalogRow struct {
	GraphID       string          `db:"graph_id"`
	Drawable      json.RawMessage `db:"drawable"`
	XrayDrawables json.RawMessage `db:"xray_drawables"`
	Subgraphs     json.RawMessage `db:"subgraphs"`
	InputSchema   json.RawMessage `db:"input_schema"`
	OutputSchema  json.RawMessage `db:"output_schema"`
	StateSchema   json.RawMessage `db:"state_schema"`
	ConfigSchema  json.RawMessage `db:"config_schema"`
	ContextSchema json.RawMessage `db:"context_schema"`
}

// graphOfAssistant reads the catalog entry of the graph of the assistant
// ref names; 404 when the assistant or its graph is unknown.
func graphOfAssistant(ctx context.Context, db postgres.DBTX, ref string) (*catalogRow, error) {
	a, err := resolve(ctx, db, ref, "")
	if err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, `SELECT graph_id, drawable, xray_drawables, subgraphs, input_schema,
		output_schema, state_schema, config_schema, context_schema FROM graphs WHERE graph_id = $1`, a.GraphID)
	if err != nil {
		return nil, err
	}
	g, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[catalogRow])
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, graphNotFound(ctx, db, a.GraphID)
	}
	if err != nil {
		return nil, err
	}
	return &g, nil
}

// DrawableNodes returns the node names of a drawable graph ({nodes: [{id}],
// edges}), without __start__ and __end__, in drawing order.
func DrawableNodes(d map[string]any) ([]string, error) {
	list, ok := d["nodes"].([]any)
	if !ok {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid drawable: must be an object with a nodes list")
	}
	if _, ok := d["edges"].([]any); !ok {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid drawable: must be an object with an edges list")
	}
	nodes := []string{}
	for i, n := range list {
		m, _ := n.(map[string]any)
		id, _ := m["id"].(string)
		if id == "" {
			return nil, apperr.Errorf(apperr.Invalid, "Invalid drawable: nodes[%d] needs a string id", i)
		}
		if id != graph.START && id != graph.END && !slices.Contains(nodes, id) {
			nodes = append(nodes, id)
		}
	}
	return nodes, nil
}

// WorkerGraph returns the stand-in for graphID when a worker registered it
// (ok false when it is not a worker graph). The server has no definition of
// such a graph, so the stand-in only names things: its nodes, in drawing
// order (the order its runtime schedules tasks in), without Func; its
// channels, the properties of its input and state schemas, each a last
// value (its own reducers run on the worker).
func WorkerGraph(ctx context.Context, db postgres.DBTX, graphID string) (g *graph.Graph, ok bool, err error) {
	var raw, input, state, defaultsDoc, kindsDoc []byte
	var language string
	var subgraphs []string
	err = db.QueryRow(ctx, `SELECT drawable, coalesce(input_schema, 'null'), coalesce(state_schema, 'null'), channel_defaults, channel_kinds, language,
			ARRAY(SELECT jsonb_object_keys(CASE jsonb_typeof(subgraphs) WHEN 'object' THEN subgraphs ELSE '{}' END))
		FROM graphs WHERE graph_id = $1 AND source = $2`, graphID, SourceWorker).Scan(&raw, &input, &state, &defaultsDoc, &kindsDoc, &language, &subgraphs)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var d map[string]any
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, false, err
	}
	names, err := DrawableNodes(d)
	if err != nil {
		return nil, false, err
	}
	g = &graph.Graph{ID: graphID, Language: language, Subgraphs: subgraphs}
	for _, n := range names {
		g.Nodes = append(g.Nodes, graph.Node{Name: n})
	}
	var defaults map[string]any
	if err := jsonv.Decode(defaultsDoc, &defaults); err != nil {
		return nil, false, fmt.Errorf("graph catalog: channel defaults of %s: %w", graphID, err)
	}
	for _, doc := range [][]byte{input, state} {
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		_ = json.Unmarshal(doc, &schema)
		for _, k := range slices.Sorted(maps.Keys(schema.Properties)) {
			if _, dup := g.Channel(k); !dup {
				g.Channels = append(g.Channels, graph.Channel{Name: k, Default: defaults[k]})
			}
		}
	}
	// A channel with a default but in neither schema still reads as it.
	for _, k := range slices.Sorted(maps.Keys(defaults)) {
		if _, dup := g.Channel(k); !dup {
			g.Channels = append(g.Channels, graph.Channel{Name: k, Default: defaults[k]})
		}
	}
	var kinds map[string]string
	if err := json.Unmarshal(kindsDoc, &kinds); err != nil {
		return nil, false, fmt.Errorf("graph catalog: channel kinds of %s: %w", graphID, err)
	}
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		if _, ok := g.Channel(k); !ok {
			g.Channels = append(g.Channels, graph.Channel{Name: k})
		}
		for i := range g.Channels {
			if g.Channels[i].Name == k {
				g.Channels[i].Delta = kinds[k]
			}
		}
	}
	return g, true, nil
}
