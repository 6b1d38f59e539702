DROP TABLE IF EXISTS graphs;
DROP INDEX IF EXISTS assistants_metadata_idx;
DROP INDEX IF EXISTS assistants_created_idx;
DROP TABLE IF EXISTS assistant_versions;
