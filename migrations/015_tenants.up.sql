-- Tenant isolation (issue 19): every tenant-owned row names its tenant, and
-- every statement of the API filters by it (see docs/tenants.md). '' is the
-- default tenant: the one every request belongs to when auth is off, and the
-- owner of every row written before this migration.
--
-- Ids stay globally unique (thread_id, run_id, assistant_id, cron_id are
-- still primary keys on their own): checkpoints, events and dispatches are
-- keyed by them and reached only through a row that was found in the
-- caller's tenant first. The store is the exception: its keys are chosen by
-- the client, so two tenants may file items under the same namespace and
-- key, and the tenant leads its primary key.
ALTER TABLE threads ADD COLUMN tenant_id text NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN tenant_id text NOT NULL DEFAULT '';
ALTER TABLE assistants ADD COLUMN tenant_id text NOT NULL DEFAULT '';
-- A system assistant (one per graph, created by the server, id derived from
-- the graph id) is shared: every tenant reads and runs it; only the default
-- tenant changes it. The server marks them at start (EnsureSystem).
ALTER TABLE assistants ADD COLUMN shared boolean NOT NULL DEFAULT false;
ALTER TABLE crons ADD COLUMN tenant_id text NOT NULL DEFAULT '';
ALTER TABLE store_items ADD COLUMN tenant_id text NOT NULL DEFAULT '';
ALTER TABLE store_vectors ADD COLUMN tenant_id text NOT NULL DEFAULT '';

-- Lists and searches read one tenant's rows in their default order.
DROP INDEX threads_updated_at_idx;
DROP INDEX threads_created_at_idx;
CREATE INDEX threads_updated_at_idx ON threads (tenant_id, updated_at DESC, thread_id DESC);
CREATE INDEX threads_created_at_idx ON threads (tenant_id, created_at DESC, thread_id DESC);
DROP INDEX assistants_created_idx;
CREATE INDEX assistants_created_idx ON assistants (tenant_id, created_at DESC, assistant_id DESC);
DROP INDEX crons_created_idx;
CREATE INDEX crons_created_idx ON crons (tenant_id, created_at DESC, cron_id DESC);
-- POST /runs/cancel by status: one tenant's inflight runs.
CREATE INDEX runs_tenant_inflight_idx ON runs (tenant_id) WHERE status IN ('pending', 'running');

-- The store: (tenant, namespace, key) identifies an item; its vectors follow.
ALTER TABLE store_vectors DROP CONSTRAINT store_vectors_namespace_key_fkey;
ALTER TABLE store_vectors DROP CONSTRAINT store_vectors_pkey;
ALTER TABLE store_items DROP CONSTRAINT store_items_pkey;
ALTER TABLE store_items ADD PRIMARY KEY (tenant_id, namespace, key);
ALTER TABLE store_vectors ADD PRIMARY KEY (tenant_id, namespace, key, field);
ALTER TABLE store_vectors ADD FOREIGN KEY (tenant_id, namespace, key)
    REFERENCES store_items (tenant_id, namespace, key) ON DELETE CASCADE;
DROP INDEX store_items_ns_path_idx;
DROP INDEX store_items_updated_at_idx;
CREATE INDEX store_items_ns_path_idx ON store_items (tenant_id, ns_path, updated_at DESC);
CREATE INDEX store_items_updated_at_idx ON store_items (tenant_id, updated_at DESC);
