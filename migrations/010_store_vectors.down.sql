DROP TABLE IF EXISTS store_vectors;
