-- The Store (reference §10): long-term memory, JSON objects filed under a
-- namespace (a path of labels) and a key. See internal/store/doc.go.

-- weft_store_ns_path renders a namespace as its labels joined and ended by
-- "." (['a','b'] → 'a.b.'). Labels never contain "." (the API refuses them),
-- so the text is unique per namespace, and every namespace under the prefix
-- ['a','b'] has a path in the range ['a.b.', 'a.b/'): a prefix search is a
-- range scan of one btree. (array_to_string is only STABLE for arbitrary
-- arrays; on text[] it is immutable, which a generated column needs.)
CREATE FUNCTION weft_store_ns_path(ns text[]) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT array_to_string(ns, '.') || '.' $$;

CREATE TABLE store_items (
    namespace   text[] NOT NULL,
    key         text NOT NULL,
    value       jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    -- NULL: never expires. Otherwise the item is invisible from this instant
    -- on and the sweeper deletes it; refresh_ttl reads set it to the read's
    -- time plus ttl_minutes.
    expires_at  timestamptz,
    ttl_minutes double precision,
    -- Byte order (COLLATE "C") keeps the prefix range exact whatever the
    -- database collation.
    ns_path     text COLLATE "C" NOT NULL GENERATED ALWAYS AS (weft_store_ns_path(namespace)) STORED,
    PRIMARY KEY (namespace, key),
    CONSTRAINT store_items_namespace_not_empty CHECK (cardinality(namespace) > 0),
    CONSTRAINT store_items_key_not_empty CHECK (key <> ''),
    CONSTRAINT store_items_value_object CHECK (jsonb_typeof(value) = 'object'),
    CONSTRAINT store_items_ttl CHECK ((ttl_minutes IS NULL) = (expires_at IS NULL) AND ttl_minutes > 0)
);

-- Prefix search and namespace listing: a range on ns_path. Listing all items
-- newest first: updated_at. Filters (value @> ...): GIN. The sweeper: the
-- items that can expire.
CREATE INDEX store_items_ns_path_idx ON store_items (ns_path, updated_at DESC);
CREATE INDEX store_items_updated_at_idx ON store_items (updated_at DESC);
CREATE INDEX store_items_value_idx ON store_items USING gin (value jsonb_path_ops);
CREATE INDEX store_items_expires_at_idx ON store_items (expires_at) WHERE expires_at IS NOT NULL;
