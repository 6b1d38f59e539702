-- The functions read the caller's search_path again (as before migration 029).
ALTER FUNCTION public.weft_fence(uuid, uuid, boolean) RESET search_path;
ALTER FUNCTION public.weft_store_ns_path(text[]) RESET search_path;
ALTER FUNCTION public.weft_blob(text, text, bytea) RESET search_path;
ALTER FUNCTION public.weft_list_extend(jsonb, bigint, bigint) RESET search_path;
ALTER FUNCTION public.weft_elements_collect(text) RESET search_path;
ALTER FUNCTION public.weft_blob_type(text) RESET search_path;
ALTER FUNCTION public.weft_run_metadata(jsonb, uuid) RESET search_path;
ALTER FUNCTION public.weft_thread_values(uuid, jsonb, jsonb) RESET search_path;
ALTER FUNCTION public.weft_thread_values_refs(uuid, jsonb) RESET search_path;
ALTER FUNCTION public.weft_thread_values_inline(text, text, text) RESET search_path;
ALTER FUNCTION public.weft_run_input(uuid, text) RESET search_path;
ALTER FUNCTION public.weft_run_input_whole(jsonb, uuid) RESET search_path;
ALTER FUNCTION public.weft_run_kwargs(jsonb, uuid) RESET search_path;
ALTER FUNCTION public.weft_run_input_ref(uuid, uuid, text, integer) RESET search_path;
ALTER FUNCTION public.weft_run_input_inline(text, text) RESET search_path;
ALTER FUNCTION public.weft_lc_message(bytea) RESET search_path;
ALTER FUNCTION langgraph.checkpoint_blobs_insert() RESET search_path;
ALTER FUNCTION langgraph.checkpoint_blobs_delete() RESET search_path;
