DROP TABLE IF EXISTS store_items;
DROP FUNCTION IF EXISTS weft_store_ns_path(text[]);
