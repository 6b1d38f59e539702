-- A thread's projection may reference a list of LangChain message
-- envelopes too (issue 29): the Python worker's messages, and the JS
-- worker's, are stored as LangChain serializes them ({"lc": 1, "type":
-- "constructor", "id": [...], "kwargs": {...}}), which the API shows as
-- message dicts (serde.NormalizeLC). weft_thread_values now renders each
-- such envelope as NormalizeLC does, so the thread row no longer stores the
-- whole conversation again (0.44x its JSON on a 200-turn Python chat). A
-- writer references such a list only when every element is one this
-- rendering covers (serde.NormalizedBySQL); any other stays whole.

-- weft_lc_message is element p of a list as weft_thread_values renders it:
-- a LangChain message envelope (lc 1, a constructor with object kwargs,
-- id ["langchain", "schema", "messages", <class>] as Python LangChain
-- writes it or ["langchain_core", "messages", <class>] as LangChain.js
-- does, the class named …Message or …MessageChunk) becomes its kwargs
-- with "type" from the class when they lack one; Python's also get the
-- fields Python's model_dump always has. Anything else is p as it is.
CREATE FUNCTION weft_lc_message(p bytea) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
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
            || kw;
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

-- weft_thread_values as migration 023 made it, with the elements of a
-- referenced list that hold "lc" rendered by weft_lc_message.
CREATE OR REPLACE FUNCTION weft_thread_values(p_thread_id uuid, p_values jsonb, p_refs jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
    r record;
    b record;
    h jsonb;
    n bigint;
    list bytea;
    doc text;
BEGIN
    IF p_refs IS NULL THEN
        RETURN p_values;
    END IF;
    doc := left(coalesce(p_values, '{}')::text, -1);
    FOR r IN SELECT key, value FROM jsonb_each_text(p_refs) LOOP
        SELECT type, blob INTO b FROM checkpoint_blobs
        WHERE thread_id = p_thread_id::text AND checkpoint_ns = '' AND channel = r.key AND version = r.value;
        IF NOT FOUND OR b.type NOT IN ('json', 'weft_list') THEN
            RAISE EXCEPTION 'weft: thread % values: channel % version % is not stored', p_thread_id, r.key, r.value
                USING ERRCODE = 'P0002';
        END IF;
        list := b.blob;
        IF b.type = 'weft_list' THEN
            -- One index range scan per range of the header (weft_blob probes
            -- the index once per element).
            h := convert_from(b.blob, 'UTF8')::jsonb;
            SELECT count(*), '['::bytea || coalesce(string_agg(CASE WHEN position('"lc"'::bytea IN e.data) = 0 THEN e.data
                    ELSE weft_lc_message(e.data) END, ','::bytea ORDER BY rg.ord, e.seq), ''::bytea) || ']'::bytea
            INTO n, list
            FROM jsonb_array_elements(h -> 'r') WITH ORDINALITY AS rg(rng, ord)
            CROSS JOIN LATERAL (SELECT x.seq, x.data FROM thread_elements x WHERE x.thread_id = p_thread_id::text
                AND x.seq BETWEEN (rg.rng ->> 0)::bigint AND (rg.rng ->> 1)::bigint OFFSET 0) e;
            IF n <> (h ->> 'n')::bigint THEN
                RAISE EXCEPTION 'weft: thread % values: channel % version % lacks % of its % elements',
                    p_thread_id, r.key, r.value, (h ->> 'n')::bigint - n, (h ->> 'n')::bigint USING ERRCODE = 'P0002';
            END IF;
        ELSIF position('"lc"'::bytea IN list) > 0 THEN
            SELECT '['::bytea || coalesce(string_agg(weft_lc_message(convert_to(x.v::text, 'UTF8')), ','::bytea ORDER BY x.ord),
                ''::bytea) || ']'::bytea
            INTO list
            FROM jsonb_array_elements(convert_from(list, 'UTF8')::jsonb) WITH ORDINALITY AS x(v, ord);
        END IF;
        doc := doc || CASE WHEN doc = '{' THEN '' ELSE ', ' END || to_json(r.key)::text || ': ' || convert_from(list, 'UTF8');
    END LOOP;
    RETURN (doc || '}')::jsonb;
END
$$;
