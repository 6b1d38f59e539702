-- Folds every tenant back into one: fails (duplicate key) when two tenants
-- hold the same store namespace and key.
DROP INDEX store_items_ns_path_idx;
DROP INDEX store_items_updated_at_idx;
CREATE INDEX store_items_ns_path_idx ON store_items (ns_path, updated_at DESC);
CREATE INDEX store_items_updated_at_idx ON store_items (updated_at DESC);
ALTER TABLE store_vectors DROP CONSTRAINT store_vectors_tenant_id_namespace_key_fkey;
ALTER TABLE store_vectors DROP CONSTRAINT store_vectors_pkey;
ALTER TABLE store_items DROP CONSTRAINT store_items_pkey;
ALTER TABLE store_items ADD PRIMARY KEY (namespace, key);
ALTER TABLE store_vectors ADD PRIMARY KEY (namespace, key, field);
ALTER TABLE store_vectors ADD CONSTRAINT store_vectors_namespace_key_fkey FOREIGN KEY (namespace, key)
    REFERENCES store_items (namespace, key) ON DELETE CASCADE;

DROP INDEX runs_tenant_inflight_idx;
DROP INDEX crons_created_idx;
CREATE INDEX crons_created_idx ON crons (created_at DESC, cron_id DESC);
DROP INDEX assistants_created_idx;
CREATE INDEX assistants_created_idx ON assistants (created_at DESC, assistant_id DESC);
DROP INDEX threads_updated_at_idx;
DROP INDEX threads_created_at_idx;
CREATE INDEX threads_updated_at_idx ON threads (updated_at DESC, thread_id DESC);
CREATE INDEX threads_created_at_idx ON threads (created_at DESC, thread_id DESC);

ALTER TABLE store_vectors DROP COLUMN tenant_id;
ALTER TABLE store_items DROP COLUMN tenant_id;
ALTER TABLE crons DROP COLUMN tenant_id;
ALTER TABLE assistants DROP COLUMN shared;
ALTER TABLE assistants DROP COLUMN tenant_id;
ALTER TABLE runs DROP COLUMN tenant_id;
ALTER TABLE threads DROP COLUMN tenant_id;
