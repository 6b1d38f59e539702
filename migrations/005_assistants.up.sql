-- Assistants become editable (reference API §3): every create, PATCH and
-- switch keeps an immutable version row, and the graphs an assistant may
-- name are listed in a catalog with their drawings and JSON Schemas. See
-- internal/assistants/doc.go.

-- One row per version of an assistant. The assistants row is the current
-- version (assistants.version names which); PATCH adds max(version) + 1,
-- POST /assistants/{id}/latest copies an old version back into assistants.
CREATE TABLE assistant_versions (
    assistant_id uuid NOT NULL REFERENCES assistants (assistant_id) ON DELETE CASCADE,
    version      integer NOT NULL CHECK (version > 0),
    graph_id     text NOT NULL,
    config       jsonb NOT NULL DEFAULT '{}',
    context      jsonb NOT NULL DEFAULT '{}',
    metadata     jsonb NOT NULL DEFAULT '{}',
    name         text NOT NULL,
    description  text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (assistant_id, version)
);

-- The assistants that exist so far (system assistants) get their version 1.
INSERT INTO assistant_versions (assistant_id, version, graph_id, config, context, metadata, name, description, created_at)
SELECT assistant_id, version, graph_id, config, context, metadata, name, description, created_at FROM assistants;

-- Search: newest first by default, and metadata containment.
CREATE INDEX assistants_created_idx ON assistants (created_at DESC, assistant_id DESC);
CREATE INDEX assistants_metadata_idx ON assistants USING gin (metadata jsonb_path_ops);

-- The graph catalog: every graph an assistant may name, what
-- GET /assistants/{id}/graph, /schemas and /subgraphs answer from. The
-- server upserts its built-in graphs at start (source 'builtin'); external
-- workers will register theirs through the worker API.
--   drawable        {nodes, edges} as LangGraph draws the graph (xray=false)
--   xray_drawables  the drawing with subgraphs expanded, element i at depth
--                   i + 1 (xray=true takes the last); [] for a graph
--                   without subgraphs, which draws the same with xray
--   subgraphs       {"<namespace>": {input_schema, output_schema,
--                   state_schema, config_schema, context_schema}}, nested
--                   namespaces joined with '|'
CREATE TABLE graphs (
    graph_id       text PRIMARY KEY,
    drawable       jsonb NOT NULL,
    xray_drawables jsonb NOT NULL DEFAULT '[]',
    subgraphs      jsonb NOT NULL DEFAULT '{}',
    input_schema   jsonb,
    output_schema  jsonb,
    state_schema   jsonb,
    config_schema  jsonb,
    context_schema jsonb,
    source         text NOT NULL DEFAULT 'builtin',
    updated_at     timestamptz NOT NULL DEFAULT now()
);
