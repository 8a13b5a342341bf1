-- ft_parse_limits: the query parser's work is bounded and cancellable.
-- A 200,000-term query fails at once with 54000 (segvec.max_query_terms),
-- nesting past 64 levels with 54001; a long query parses in linear time
-- (a 9,000-term OR answers, positions are counted from the previous one,
-- not from the start), and a statement_timeout of 10 ms cancels a parse
-- of 50 MB (without interrupt checks the parse would run to its syntax
-- error instead).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
SET jit = off;
\set VERBOSITY terse

CREATE TABLE pl (id int, tag text, n int, embedding real[]);
INSERT INTO pl SELECT i, 't' || i, i, ARRAY[i, 1]::real[] FROM generate_series(1, 100) i;
SELECT ft.create('pl_idx', 'pl', 'id', 'embedding');

-- 200,000 terms: refused at the first term past the limit.  (A parse
-- that took time quadratic in the length would hit the timeout first.)
SET statement_timeout = '20s';
SELECT count(*) FROM ft.query('pl_idx',
  (SELECT string_agg('@tag:{t' || i || '}', ' | ') FROM generate_series(1, 200000) i));
SELECT count(*) FROM ft.search('pl_idx', '{1,1}', 5,
  filter => (SELECT string_agg('@n:[' || i || ']', ' | ') FROM generate_series(1, 200000) i));
-- tags count as terms too
SELECT count(*) FROM ft.query('pl_idx',
  '@tag:{' || (SELECT string_agg('t' || i, ' | ') FROM generate_series(1, 200000) i) || '}');
RESET statement_timeout;

-- the limit is a setting
SET segvec.max_query_terms = 3;
SELECT count(*) FROM ft.query('pl_idx', '@tag:{t1 | t2} | @n:[5]');
SELECT count(*) FROM ft.query('pl_idx', '@tag:{t1 | t2} | @n:[5] | @n:[6]');
RESET segvec.max_query_terms;

-- 9,000 terms under the limit: the right answer
SELECT count(*) FROM ft.query('pl_idx',
  (SELECT string_agg('@n:[' || i || ' ' || i || ']', ' | ') FROM generate_series(1, 9000) i)
  || ' LIMIT 0 1000');

-- INKEYS takes any number of keys: 150,000 of them (100 exist), and a
-- count beyond the keys given is a syntax error where they run out
SELECT count(*) FROM ft.query('pl_idx', '* INKEYS 150000 ' ||
  (SELECT string_agg(i::text, ' ') FROM generate_series(1, 150000) i) || ' LIMIT 0 1000');
SELECT count(*) FROM ft.query('pl_idx', '* INKEYS 4 1 2 3');
SELECT count(*) FROM ft.query('pl_idx', '* INKEYS 99999999999 1 2 3');

-- nesting: 64 levels are fine, 65 are not
SELECT count(*) FROM ft.query('pl_idx', repeat('(', 64) || '@n:[1 3]' || repeat(')', 64));
SELECT count(*) FROM ft.query('pl_idx', repeat('(', 65) || '@n:[1 3]' || repeat(')', 65));
SELECT count(*) FROM ft.query('pl_idx', repeat('-', 65) || '@n:[1 3]');
SELECT count(*) FROM ft.query('pl_idx', repeat('~', 65) || '@n:[1 3]');

-- positions in a long query are right, in characters
SELECT count(*) FROM ft.query('pl_idx', repeat('@tag:{é} ', 5000) || '@n:[1 2 3]');

-- a 50 MB query: 10 ms of statement_timeout cancel its parse
CREATE TEMP TABLE longq AS SELECT repeat(' ', 50000000) || '@@' AS q;
SET statement_timeout = '10ms';
SELECT count(*) FROM longq, ft.query('pl_idx', longq.q);
RESET statement_timeout;
-- without a timeout it runs to its syntax error
SELECT count(*) FROM longq, ft.query('pl_idx', longq.q);
