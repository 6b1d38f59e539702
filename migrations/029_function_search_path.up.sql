-- Every Weft SQL function runs with its own search_path, never the
-- caller's. The views of schema langgraph call these functions, and a
-- stock PostgresSaver connects with a search_path of its choosing: with
-- `langgraph` alone the functions found none of Weft's tables (relation
-- "thread_elements" does not exist), and with a schema of the caller's (or
-- its temporary schema) first, a table named like one of Weft's there was
-- read instead of Weft's. PostgreSQL's guidance for functions (CREATE
-- FUNCTION, "Writing SECURITY DEFINER Functions Safely"): a fixed
-- search_path naming only trusted schemas, pg_temp last (pg_catalog is
-- searched first when it is not named).
--
-- Weft's tables are in schema public (the views of migration 014 name it).
-- A later migration that creates or replaces a function must give it the
-- same SET search_path = public, pg_temp (CREATE OR REPLACE drops the
-- setting); internal/postgres's tests refuse a function without it.
--
-- A SQL function with a SET clause is no longer inlined into the queries
-- that call it: about 2 microseconds more a call (weft_run_kwargs and
-- weft_run_metadata are called once per run read).
ALTER FUNCTION public.weft_fence(uuid, uuid, boolean) SET search_path = public, pg_temp;
ALTER FUNCTION public.weft_store_ns_path(text[]) SET search_path = public, pg_temp;
ALTER FUNCTION public.weft_blob(text, text, bytea) SET search_path = public, pg_temp;
ALTER FUNCTION public.weft_list_extend(jsonb, bigint, bigint) SET search_path = public, pg_temp;
ALTER FUNCTION public.weft_elements_collect(text) SET search_path = public, pg_temp;
ALTER FUNCTION public.weft_blob_type(text) SET search_path = public, pg_temp;
ALTER FUNCTION public.weft_run_metadata(jsonb, uuid) SET search_path = public, pg_temp;
ALTER FUNCTION public.weft_thread_values(uuid, jsonb, jsonb) SET search_path = public, pg_temp;
ALTER FUNCTION public.weft_thread_values_refs(uuid, jsonb) SET search_path = public, pg_temp;
ALTER FUNCTION public.weft_thread_values_inline(text, text, text) SET search_path = public, pg_temp;
ALTER FUNCTION public.weft_run_input(uuid, text) SET search_path = public, pg_temp;
ALTER FUNCTION public.weft_run_input_whole(jsonb, uuid) SET search_path = public, pg_temp;
ALTER FUNCTION public.weft_run_kwargs(jsonb, uuid) SET search_path = public, pg_temp;
ALTER FUNCTION public.weft_run_input_ref(uuid, uuid, text, integer) SET search_path = public, pg_temp;
ALTER FUNCTION public.weft_run_input_inline(text, text) SET search_path = public, pg_temp;
ALTER FUNCTION public.weft_lc_message(bytea) SET search_path = public, pg_temp;
ALTER FUNCTION langgraph.checkpoint_blobs_insert() SET search_path = public, pg_temp;
ALTER FUNCTION langgraph.checkpoint_blobs_delete() SET search_path = public, pg_temp;
