\set ECHO none
-- plan(query): EXPLAIN (COSTS OFF) query, in the same words on every
-- PostgreSQL version the suites run on (a suite includes it with \i, by
-- its path under pg_regress's PG_ABS_SRCDIR): an initplan's output as 17 and
-- later print it, (InitPlan N).colM, where 15 and 16 print
-- $K and head the initplan "InitPlan N (returns $K)"; and without the
-- "Disabled: true" lines 18 adds under nodes of a disabled plan type
CREATE FUNCTION pg_temp.plan(query text) RETURNS SETOF text
LANGUAGE plpgsql AS $plan$
DECLARE
    lines text[] := '{}';
    params text[] := '{}';
    names text[] := '{}';
    line text;
    m text[];
    p text;
    i int;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        lines := lines || line;
        m := regexp_match(line, 'InitPlan (\d+) \(returns (.*)\)$');
        IF m IS NOT NULL THEN
            i := 0;
            FOREACH p IN ARRAY string_to_array(m[2], ',') LOOP
                i := i + 1;
                params := params || btrim(p);
                names := names || format('(InitPlan %s).col%s', m[1], i);
            END LOOP;
        END IF;
    END LOOP;
    FOREACH line IN ARRAY lines LOOP
        CONTINUE WHEN line ~ '^\s*Disabled: true$';
        line := regexp_replace(line, '^(\s*InitPlan \d+) \(returns .*\)$', '\1');
        FOR i IN 1 .. coalesce(array_length(params, 1), 0) LOOP
            line := regexp_replace(line, '\' || params[i] || '(?!\d)',
                                   names[i], 'g');
        END LOOP;
        RETURN NEXT line;
    END LOOP;
END
$plan$;
\set ECHO all
