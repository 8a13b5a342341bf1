-- RediSearch conformance measurement: queries taken from RediSearch's own
-- test suite (tests/pytests of github.com/RediSearch/RediSearch, commit
-- 075d9f364f), each restated as data: the source test, whether it is a
-- full-text query, the data it runs on (loaded below the way a PostgreSQL
-- user would hold it: a TAG field split on its separator and trimmed into a
-- text[] column, TEXT fields as text columns), the query, its params and
-- the answer those tests assert.  Run by run.sh; prints one line per case
-- and the pass rates.  Not a regression suite: the failures are the point.
--
-- kinds: o = ids in this order, s = ids as a set, e = RediSearch answers
-- with an error (any error here passes), d = ids in this order with their
-- distances (id:distance, equal within 1e-6 + 1e-6 relative, as the tests'
-- float32 tolerance), f = ids in this order with their fields
-- ("id {json}" separated by ";").
-- verdicts: pass; refused (an error where RediSearch answers); silent (a
-- different answer without an error, or an answer where RediSearch
-- errors).
\set QUIET on
\pset format unaligned
\pset tuples_only on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
CREATE EXTENSION IF NOT EXISTS fuzzystrmatch;

CREATE SCHEMA rs;
-- test_tags.py::_testDialect2TagExact (tag TAG, id NUMERIC)
CREATE TABLE rs.tagq (doc text, id int, tag text[], embedding real[]);
INSERT INTO rs.tagq VALUES
 ('{doc}:1', 1, ARRAY['abc:1'], '{1,0}'),
 ('{doc}:2', 2, ARRAY['xyz:2'], '{1,0}'),
 ('{doc}:3', 3, ARRAY['xyz:2', 'abc:1'], '{1,0}'),
 ('{doc}:4', 4, ARRAY['abc:1-xyz:2'], '{1,0}'),
 ('{doc}:5', 5, ARRAY['joe@mail.com'], '{1,0}'),
 ('{doc}:6', 6, ARRAY['tag with {brackets}'], '{1,0}'),
 ('{doc}:7', 7, ARRAY['abc:1|xyz:2'], '{1,0}'),
 ('{doc}:8', 8, ARRAY['_12@'], '{1,0}'),
 ('{doc}:9', 9, ARRAY['-99999'], '{1,0}'),
 ('{doc}:10', 10, ARRAY['ab(12)'], '{1,0}'),
 ('{doc}:11', 11, ARRAY['a|b-c d'], '{1,0}'),
 ('{doc}:12', 12, ARRAY[E'_@12\\345'], '{1,0}'),
 ('{doc}:13', 13, ARRAY['$literal'], '{1,0}'),
 ('{doc}:14', 14, ARRAY['*literal'], '{1,0}'),
 ('{doc}:15', 15, ARRAY['with: space'], '{1,0}'),
 ('{doc}:16', 16, ARRAY['leading:space'], '{1,0}'),
 ('{doc}:17', 17, ARRAY['trailing:space'], '{1,0}'),
 ('{doc}:18', 18, ARRAY['x'], '{1,0}'),
 ('{doc}:19', 19, ARRAY['w'], '{1,0}'),
 ('{doc}:20', 20, ARRAY['w'''], '{1,0}'),
 ('{doc}:21', 21, ARRAY['w'''''], '{1,0}'),
 ('{doc}:22', 22, ARRAY['w''?*1'''], '{1,0}'),
 ('{doc}:23', 23, ARRAY['hello world'], '{1,0}'),
 ('{doc}:24', 24, ARRAY['hello'], '{1,0}');
SELECT ft.create('tagq_idx', 'rs.tagq', 'doc', 'embedding') IS NOT NULL;

-- test_tags.py::testTagCaseSensitive (second phase: 'f o,F O', 'F O', 'f o')
CREATE TABLE rs.case1 (doc text, t text[], embedding real[]);
INSERT INTO rs.case1 VALUES ('doc1', '{f o,F O}', '{1,0}'),
	('doc2', '{F O}', '{1,0}'), ('doc3', '{f o}', '{1,0}');
CREATE TABLE rs.case2 (LIKE rs.case1);
INSERT INTO rs.case2 SELECT * FROM rs.case1;
-- SEPARATOR . : the whole value is one tag
CREATE TABLE rs.case3 (doc text, t text, embedding real[]);
INSERT INTO rs.case3 VALUES ('doc1', 'f o,F O', '{1,0}'),
	('doc2', 'F O', '{1,0}'), ('doc3', 'f o', '{1,0}');
CREATE TABLE rs.case4 (LIKE rs.case3);
INSERT INTO rs.case4 SELECT * FROM rs.case3;
SELECT ft.create('case1_idx', 'rs.case1', 'doc', 'embedding') IS NOT NULL;
SELECT ft.create('case2_idx', 'rs.case2', 'doc', 'embedding',
	casesensitive => '{t}') IS NOT NULL;
SELECT ft.create('case3_idx', 'rs.case3', 'doc', 'embedding') IS NOT NULL;
SELECT ft.create('case4_idx', 'rs.case4', 'doc', 'embedding',
	casesensitive => '{t}') IS NOT NULL;

-- test_tags.py::testTagIndex: title TEXT, tags TAG; doc n has title
-- 'hello world term<n>', tags 'foo bar,xxx,tag <n>'
CREATE TABLE rs.tagidx (doc text, title text, tags text[], embedding real[]);
INSERT INTO rs.tagidx SELECT 'doc' || n, 'hello world term' || n,
	ARRAY['foo bar', 'xxx', 'tag ' || n], '{1,0}'
	FROM generate_series(0, 9) n;
SELECT ft.create('tagidx_idx', 'rs.tagidx', 'doc', 'embedding',
	text_fields => '{title}') IS NOT NULL;
-- test_tags.py::testSeparator (separator ':') and testTagPrefix
CREATE TABLE rs.sep (doc text, title text, tags text[], embedding real[]);
INSERT INTO rs.sep VALUES ('doc1', 'hello world',
	'{x,hello world,fooz bar,"foo,bar",BOO FAR}', '{1,0}');
SELECT ft.create('sep_idx', 'rs.sep', 'doc', 'embedding') IS NOT NULL;
CREATE TABLE rs.pfx (doc text, title text, tags text[], embedding real[]);
INSERT INTO rs.pfx VALUES ('doc1', 'hello world',
	'{hello world,hello-world,hell,jell}', '{1,0}');
SELECT ft.create('pfx_idx', 'rs.pfx', 'doc', 'embedding') IS NOT NULL;

-- test_fuzzy.py: title TEXT, body TEXT
CREATE TABLE rs.fuzzy (doc text, title text, body text, embedding real[]);
INSERT INTO rs.fuzzy VALUES
 ('doc1', 'hello world', 'this is a test', '{1,0}'),
 ('doc2', 'hello word', 'this is a test', '{1,0}'),
 ('doc3', 'hello ward', 'this is a test', '{1,0}'),
 ('doc4', 'hello wakld', 'this is a test', '{1,0}');
SELECT ft.create('fuzzy_idx', 'rs.fuzzy', 'doc', 'embedding',
	text_fields => '{title, body}') IS NOT NULL;
-- test_fuzzy.py::testBasicFuzzy, testLdLimit: doc1 only
CREATE TABLE rs.fuzzy1 (doc text, title text, body text, embedding real[]);
INSERT INTO rs.fuzzy1 VALUES ('doc1', 'hello world', 'this is a test', '{1,0}');
SELECT ft.create('fuzzy1_idx', 'rs.fuzzy1', 'doc', 'embedding',
	text_fields => '{title, body}') IS NOT NULL;
-- test.py::testSlopInOrder, testSlopInOrderIssue1986 (title TEXT)
CREATE TABLE rs.slop (doc text, title text, embedding real[]);
INSERT INTO rs.slop VALUES ('doc1', 't1 t2', '{1,0}'), ('doc2', 't1 t3 t2', '{1,0}'),
	('doc3', 't1 t3 t4 t2', '{1,0}'), ('doc4', 't1 t3 t4 t5 t2', '{1,0}');
SELECT ft.create('slop_idx', 'rs.slop', 'doc', 'embedding',
	text_fields => '{title}') IS NOT NULL;
CREATE TABLE rs.slop2 (doc text, title text, embedding real[]);
INSERT INTO rs.slop2 VALUES ('doc1', 't1 t2', '{1,0}'), ('doc2', 't2 t1', '{1,0}'),
	('doc3', 't1', '{1,0}');
SELECT ft.create('slop2_idx', 'rs.slop2', 'doc', 'embedding',
	text_fields => '{title}') IS NOT NULL;
-- test.py::testAttributes (title TEXT, body TEXT)
CREATE TABLE rs.attr (doc text, title text, body text, embedding real[]);
INSERT INTO rs.attr VALUES ('doc1', 't1 t2', 't3 t4 t5', '{1,0}'),
	('doc2', 't3 t5', 't1 t2', '{1,0}');
SELECT ft.create('attr_idx', 'rs.attr', 'doc', 'embedding',
	text_fields => '{title, body}') IS NOT NULL;
-- test.py::testNot (foo TEXT; the test draws term<k> at random, here
-- doc i has 'constant term<i % 5>' with term4 left out: doc4, doc9 get term0)
CREATE TABLE rs.nt (doc text, foo text, embedding real[]);
INSERT INTO rs.nt SELECT 'doc' || i, 'constant term' || (i % 5) % 4, '{1,0}'
	FROM generate_series(0, 9) i;
SELECT ft.create('nt_idx', 'rs.nt', 'doc', 'embedding',
	text_fields => '{foo}') IS NOT NULL;
-- test.py::testNestedIntersection (a, b, c, d TEXT)
CREATE TABLE rs.nest (doc text, a text, b text, c text, d text, embedding real[]);
INSERT INTO rs.nest SELECT 'doc' || i, 'foo', 'bar', 'baz', 'gaz', '{1,0}'
	FROM generate_series(0, 19) i;
SELECT ft.create('nest_idx', 'rs.nest', 'doc', 'embedding',
	text_fields => '{a, b, c, d}') IS NOT NULL;
-- test.py::testNumericRange (title TEXT, score NUMERIC, price NUMERIC)
CREATE TABLE rs.num (doc text, title text, score int, price int, embedding real[]);
INSERT INTO rs.num SELECT 'doc' || i, 'hello kitty', i, 100 + 10 * i, '{1,0}'
	FROM generate_series(0, 99) i;
SELECT ft.create('num_idx', 'rs.num', 'doc', 'embedding',
	text_fields => '{title}') IS NOT NULL;
-- test_fuzzy.py::testStopwords (t1 TEXT)
CREATE TABLE rs.fuzzy_sw (doc text, t1 text, embedding real[]);
INSERT INTO rs.fuzzy_sw SELECT t, t, '{1,0}'
	FROM unnest('{iwth,ta,foo,rof,whhch,witha}'::text[]) t;
SELECT ft.create('fuzzy_sw_idx', 'rs.fuzzy_sw', 'doc', 'embedding',
	text_fields => '{t1}') IS NOT NULL;
-- test_fuzzy.py::testFuzzyWithNumbersOnly
CREATE TABLE rs.fuzzy_num (doc text, test text, embedding real[]);
INSERT INTO rs.fuzzy_num VALUES ('doc1', '12345', '{1,0}');
SELECT ft.create('fuzzy_num_idx', 'rs.fuzzy_num', 'doc', 'embedding',
	text_fields => '{test}') IS NOT NULL;

\i cases.sql
\i vecsim.sql

-- the answer of a case: ids in result order, comma-separated (with the
-- distance for kind d, the fields for kind f), or ERROR
CREATE FUNCTION rs.answer(idx text, q text, p jsonb, kind "char") RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	r text;
BEGIN
	SELECT CASE kind
			 WHEN 'd' THEN string_agg(s.id || ':' || coalesce(s.distance::float8::text, 'NULL'), ',' ORDER BY s.ord)
			 WHEN 'f' THEN string_agg(s.id || ' ' || coalesce(s.fields::text, 'NULL'), ';' ORDER BY s.ord)
			 ELSE string_agg(s.id, ',' ORDER BY s.ord) END INTO r
	  FROM ft.query(('rs.' || idx)::regclass, q, coalesce(p, '{}'))
		   WITH ORDINALITY s(id, distance, fields, ord);
	RETURN coalesce(r, '');
EXCEPTION WHEN OTHERS THEN
	RETURN 'ERROR ' || SQLSTATE || ': ' || SQLERRM;
END $$;

-- do two "id:distance" lists agree (same ids in order, distances within
-- the tolerance)?
CREATE FUNCTION rs.same_distances(got text, want text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
	SELECT coalesce(array_length(g, 1), 0) = coalesce(array_length(w, 1), 0) AND
		   NOT EXISTS (SELECT 1 FROM generate_subscripts(w, 1) i
					   WHERE split_part(g[i], ':', 1) <> split_part(w[i], ':', 1)
						  OR split_part(g[i], ':', 2) = 'NULL'
						  OR abs(split_part(g[i], ':', 2)::float8 - split_part(w[i], ':', 2)::float8)
							 > 1e-6 + 1e-6 * abs(split_part(w[i], ':', 2)::float8))
	FROM (SELECT string_to_array(nullif(got, ''), ',') g, string_to_array(nullif(want, ''), ',') w) x
$$;

CREATE TABLE rs.result AS
SELECT c.*, a.got,
	CASE
	  WHEN c.kind = 'e' THEN CASE WHEN a.got LIKE 'ERROR %' THEN 'pass' ELSE 'silent' END
	  WHEN a.got LIKE 'ERROR %' THEN 'refused'
	  WHEN c.kind IN ('o', 'f') AND a.got = c.expect THEN 'pass'
	  WHEN c.kind = 'd' AND rs.same_distances(a.got, c.expect) THEN 'pass'
	  WHEN c.kind = 's' AND
		   (SELECT coalesce(array_agg(x ORDER BY x), '{}') FROM unnest(string_to_array(a.got, ',')) x) =
		   (SELECT coalesce(array_agg(x ORDER BY x), '{}') FROM unnest(string_to_array(c.expect, ',')) x)
		THEN 'pass'
	  ELSE 'silent'
	END AS verdict
FROM rs.cases c, LATERAL (SELECT rs.answer(c.idx, c.q, c.p, c.kind) AS got) a;

\echo '-- every case that does not pass'
SELECT n || ' ' || verdict || ' [' || src || '] ' || idx || ' ' || q ||
	coalesce(' ' || p::text, '') || E'\n    want ' || kind::text || ':' ||
	coalesce(expect, '') || E'\n    got  ' || got
FROM rs.result WHERE verdict <> 'pass' ORDER BY n;
\echo '-- pass rates'
SELECT CASE WHEN text THEN 'text' ELSE 'non-text' END || ': ' ||
	count(*) FILTER (WHERE verdict = 'pass') || ' of ' || count(*) ||
	' pass (' || round(100.0 * count(*) FILTER (WHERE verdict = 'pass') / count(*), 1) ||
	'%), ' || count(*) FILTER (WHERE verdict = 'refused') || ' refused, ' ||
	count(*) FILTER (WHERE verdict = 'silent') || ' silent differences'
FROM rs.result GROUP BY text ORDER BY text;
\echo '-- per source file'
SELECT f || ': ' || count(*) || ' cases, ' ||
	count(*) FILTER (WHERE verdict = 'pass') || ' pass, ' ||
	count(*) FILTER (WHERE verdict = 'refused') || ' refused, ' ||
	count(*) FILTER (WHERE verdict = 'silent') || ' silent'
FROM (SELECT split_part(src, ':', 1) AS f, verdict FROM rs.result) r
GROUP BY f ORDER BY f;
\if :{?RS_ERRORS}
\echo '-- the error of each case RediSearch answers with an error'
SELECT n || ' ' || q || E'\n    ' || got FROM rs.result WHERE kind = 'e' ORDER BY n;
\endif
