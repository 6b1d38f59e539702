-- A Python LangChain message reads with every field its model_dump has
-- (serde.message): an AI message chunk's tool_call_chunks and
-- chunk_position, a tool message's artifact and status, which the
-- worker's envelopes leave out at their defaults and LangGraph's Python
-- server shows; a LangChain.js chunk reads with its message's type ("ai"
-- for an AIMessageChunk), as LangGraph.js's server shows it (serde's
-- NormalizeLC). weft_lc_message (migration 027) renders them so too, so a
-- thread row that references a list of envelopes reads as its state.

CREATE OR REPLACE FUNCTION weft_lc_message(p bytea) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = public, pg_temp AS $$
DECLARE
    j jsonb := convert_from(p, 'UTF8')::jsonb;
    py boolean;
    cls text;
    kw jsonb;
BEGIN
    IF jsonb_typeof(j) IS DISTINCT FROM 'object' OR j -> 'lc' IS DISTINCT FROM '1'::jsonb
        OR j ->> 'type' IS DISTINCT FROM 'constructor' OR jsonb_typeof(j -> 'kwargs') IS DISTINCT FROM 'object' THEN
        RETURN p;
    END IF;
    cls := j -> 'id' ->> 3;
    py := coalesce(j -> 'id' = jsonb_build_array('langchain', 'schema', 'messages', cls), false);
    IF NOT py THEN
        cls := j -> 'id' ->> 2;
        IF j -> 'id' IS DISTINCT FROM jsonb_build_array('langchain_core', 'messages', cls) THEN
            RETURN p;
        END IF;
    END IF;
    IF cls IS NULL OR NOT (cls LIKE '%Message' OR cls LIKE '%MessageChunk') THEN
        RETURN p;
    END IF;
    kw := j -> 'kwargs';
    IF py THEN
        kw := '{"content": "", "additional_kwargs": {}, "response_metadata": {}, "name": null, "id": null}'::jsonb
            || CASE WHEN cls IN ('AIMessage', 'AIMessageChunk')
                THEN '{"tool_calls": [], "invalid_tool_calls": [], "usage_metadata": null}'::jsonb ELSE '{}'::jsonb END
            || CASE WHEN cls = 'AIMessageChunk' THEN '{"tool_call_chunks": [], "chunk_position": null}'::jsonb
                WHEN cls IN ('ToolMessage', 'ToolMessageChunk') THEN '{"artifact": null, "status": "success"}'::jsonb
                ELSE '{}'::jsonb END
            || kw;
    END IF;
    IF NOT py AND cls LIKE '%MessageChunk' THEN
        cls := left(cls, -length('Chunk')); -- LangChain.js's chunk has its message's type
    END IF;
    IF coalesce(kw ->> 'type', '') = '' THEN
        kw := kw || jsonb_build_object('type', CASE cls
            WHEN 'HumanMessage' THEN 'human' WHEN 'AIMessage' THEN 'ai' WHEN 'ToolMessage' THEN 'tool'
            WHEN 'SystemMessage' THEN 'system' WHEN 'FunctionMessage' THEN 'function' WHEN 'ChatMessage' THEN 'chat'
            WHEN 'RemoveMessage' THEN 'remove'
            ELSE CASE WHEN cls LIKE '%Chunk' THEN cls ELSE lower(left(cls, -length('Message'))) END END);
    END IF;
    RETURN convert_to(kw::text, 'UTF8');
END
$$;
