DROP TABLE IF EXISTS thread_summaries;
