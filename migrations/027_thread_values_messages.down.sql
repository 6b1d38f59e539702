-- Projections that reference a list are stored whole (rendered as this
-- migration renders them), then weft_thread_values renders elements as
-- they are stored again.
UPDATE threads SET "values" = weft_thread_values(thread_id, "values", values_refs), values_refs = NULL
WHERE values_refs IS NOT NULL;

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
            SELECT count(*), '['::bytea || coalesce(string_agg(e.data, ','::bytea ORDER BY rg.ord, e.seq), ''::bytea) || ']'::bytea
            INTO n, list
            FROM jsonb_array_elements(h -> 'r') WITH ORDINALITY AS rg(rng, ord)
            CROSS JOIN LATERAL (SELECT x.seq, x.data FROM thread_elements x WHERE x.thread_id = p_thread_id::text
                AND x.seq BETWEEN (rg.rng ->> 0)::bigint AND (rg.rng ->> 1)::bigint OFFSET 0) e;
            IF n <> (h ->> 'n')::bigint THEN
                RAISE EXCEPTION 'weft: thread % values: channel % version % lacks % of its % elements',
                    p_thread_id, r.key, r.value, (h ->> 'n')::bigint - n, (h ->> 'n')::bigint USING ERRCODE = 'P0002';
            END IF;
        END IF;
        doc := doc || CASE WHEN doc = '{' THEN '' ELSE ', ' END || to_json(r.key)::text || ': ' || convert_from(list, 'UTF8');
    END LOOP;
    RETURN (doc || '}')::jsonb;
END
$$;

DROP FUNCTION IF EXISTS weft_lc_message(bytea);
