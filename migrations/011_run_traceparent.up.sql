-- The W3C traceparent of the span that created a run (the creating request's,
-- when tracing is on; null otherwise). The executing worker starts its run
-- span as a child of it, and the run's webhook carries it: one trace from the
-- request to the worker and the webhook, across processes.
ALTER TABLE runs ADD COLUMN traceparent text;
