\set ECHO none
-- The filtered top-k of a filter-column suite, over the table named by
-- the psql variable docs (id, embedding) and the query vectors of the
-- table named by queries (n, v); set both before the \i:
--   topk(cond, qn, k, exact): the ids of the top k rows that pass cond,
--     nearest query vector qn first, in order: through the index (ordered
--     scans of segvec only) or exactly (no index);
--   check(cond): rows that pass, rows the index returns for k = 10 and 50
--     (min(k, passing)), and whether both equal the exact answer for each
--     of the queries 1 to 3.
CREATE FUNCTION pg_temp.topk(cond text, qn int, k int, exact bool,
    docs text DEFAULT :'docs', queries text DEFAULT :'queries')
RETURNS int[] LANGUAGE plpgsql AS $$
DECLARE
    r int[];
BEGIN
    IF exact THEN
        PERFORM set_config('enable_indexscan', 'off', true);
    ELSE
        PERFORM set_config('enable_seqscan', 'off', true);
        PERFORM set_config('enable_sort', 'off', true);
        PERFORM set_config('enable_bitmapscan', 'off', true);
    END IF;
    EXECUTE format('SELECT coalesce(array_agg(id), ''{}'') FROM (
        SELECT id FROM %I WHERE %s
        ORDER BY embedding <-> (SELECT v FROM %I WHERE n = $1)
        LIMIT $2) s', docs, cond, queries)
        INTO r USING qn, k;
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_seqscan', 'on', true);
    PERFORM set_config('enable_sort', 'on', true);
    PERFORM set_config('enable_bitmapscan', 'on', true);
    RETURN r;
END
$$;
CREATE FUNCTION pg_temp.check(cond text, docs text DEFAULT :'docs')
RETURNS TABLE (passing bigint, rows_10 int, rows_50 int, exact boolean)
LANGUAGE plpgsql AS $$
DECLARE
    ok boolean := true;
    q int;
BEGIN
    EXECUTE format('SELECT count(*) FROM %I WHERE %s', docs, cond) INTO passing;
    FOR q IN 1..3 LOOP
        ok := ok AND pg_temp.topk(cond, q, 10, false) = pg_temp.topk(cond, q, 10, true)
                 AND pg_temp.topk(cond, q, 50, false) = pg_temp.topk(cond, q, 50, true);
    END LOOP;
    rows_10 := coalesce(cardinality(pg_temp.topk(cond, 1, 10, false)), 0);
    rows_50 := coalesce(cardinality(pg_temp.topk(cond, 1, 50, false)), 0);
    exact := ok;
    RETURN NEXT;
END
$$;
\set ECHO all
