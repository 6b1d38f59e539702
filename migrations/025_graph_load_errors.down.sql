DROP TABLE graph_load_errors;
