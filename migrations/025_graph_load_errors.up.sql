-- A graph a worker could not load (its module threw at import, or its
-- export is not a graph): the worker serves its other graphs and reports
-- this one, so /info says which graph failed and why, not only the worker's
-- log. A later successful registration of the graph removes its row.
CREATE TABLE graph_load_errors (
    graph_id    text PRIMARY KEY,
    worker_id   text NOT NULL,
    error       text NOT NULL,
    reported_at timestamptz NOT NULL DEFAULT now()
);
