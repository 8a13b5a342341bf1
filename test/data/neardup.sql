-- neardup.sql: generators of clustered data full of near-identical twins and
-- exact duplicates, the data that leaves parts of a naive HNSW graph
-- unreachable.  Plain SQL, deterministic after setseed().
--
--   nd_rows(shape, n, dim): n rows (id, v) of a shape; VOLATILE (random())
--   nd_query(shape, i, dim): a query near the data of that shape
--
-- Shapes:
--   strands  a few (4) slowly varying curves through dim-space; points are
--            dense along each curve, so nearly every point has an almost
--            identical neighbour on both sides (a 1-dimensional manifold)
--   twins    200 tight clusters; every point comes with a twin 1e-5 away,
--            and every tenth point is an exact copy of the one before
--   dups     300 distinct vectors, each repeated exactly (~N/300 copies)
--            plus a sprinkle of unique points around them
--   clumps   the strands at 150 positions each: clumps of ~N/600 points a
--            hair (1e-4) apart, strung along the curves
--
-- Queries: nd_query(shape, i, dim) for strands, twins and dups; for any
-- shape, a data point with a little noise (nd_jitter(v, 1e-3)) does too.
--
-- Used by test/t/070_graph_neardup.pl.

-- smooth curve number s at parameter t in [0, 1]
CREATE FUNCTION nd_curve(s int, t float8, dim int) RETURNS real[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT array_agg((sin(2.0 * pi() * t * (1 + (s * 7 + j * 3) % 4) + s * 1.7 + j * 0.61)
					  + 0.3 * cos(pi() * t * (1 + j % 3) + s))::real ORDER BY j)
	FROM generate_series(1, dim) j
$$;

-- a deterministic centre c
CREATE FUNCTION nd_centre(c int, dim int) RETURNS real[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT array_agg(sin(c * 12.9898 + j * 78.233)::real ORDER BY j)
	FROM generate_series(1, dim) j
$$;

CREATE FUNCTION nd_jitter(v real[], sigma float8) RETURNS real[]
LANGUAGE sql VOLATILE AS $$
	SELECT array_agg((x + sigma * (random() - 0.5))::real ORDER BY o)
	FROM unnest(v) WITH ORDINALITY u(x, o)
$$;

-- nd_rows(shape, n, dim): n rows (id 1..n, vector) of a shape
CREATE FUNCTION nd_rows(shape text, n int, dim int)
RETURNS TABLE (id int, v real[]) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	prev real[];
BEGIN
	FOR i IN 1..n LOOP
		id := i;
		IF shape = 'strands' THEN
			v := nd_jitter(nd_curve(i % 4, random(), dim), 1e-4);
		ELSIF shape = 'clumps' THEN
			v := nd_jitter(nd_curve(i % 4, floor(random() * 150) / 150.0, dim), 1e-4);
		ELSIF shape = 'twins' THEN
			IF i % 10 = 0 THEN
				v := prev;						-- exact copy
			ELSIF i % 2 = 0 THEN
				v := nd_jitter(prev, 1e-5);		-- near-identical twin
			ELSE
				v := nd_jitter(nd_centre(i % 200, dim), 0.05);
			END IF;
		ELSIF shape = 'dups' THEN
			IF i % 20 = 0 THEN
				v := nd_jitter(nd_centre(i % 300, dim), 0.02);
			ELSE
				v := nd_centre(i % 300, dim);	-- exact duplicate
			END IF;
		ELSE
			RAISE EXCEPTION 'unknown shape "%"', shape;
		END IF;
		prev := v;
		RETURN NEXT;
	END LOOP;
END
$$;

CREATE FUNCTION nd_query(shape text, i int, dim int) RETURNS real[]
LANGUAGE sql VOLATILE AS $$
	SELECT CASE shape
		WHEN 'strands' THEN nd_jitter(nd_curve(i % 4, random(), dim), 1e-3)
		WHEN 'twins' THEN nd_jitter(nd_centre(i % 200, dim), 0.06)
		WHEN 'dups' THEN nd_jitter(nd_centre(i % 300, dim), 0.03)
	END
$$;
