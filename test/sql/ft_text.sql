-- ft_text: TEXT fields through PostgreSQL full-text search.  ft.create's
-- text_fields and language, ft.alter, the GIN index the queries use, and
-- every full-text construct of ft.query compared with hand-written SQL
-- over 3,000 rows (tsvector, ts_rank_cd, ORDER BY): the same ids in the
-- same order with the same scores.  Fuzzy terms with neither
-- fuzzystrmatch nor pg_trgm, with pg_trgm, with fuzzystrmatch.  Queued
-- upserts are searched too.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
DROP EXTENSION IF EXISTS fuzzystrmatch;
DROP EXTENSION IF EXISTS pg_trgm;
RESET client_min_messages;
SET jit = off;
\set VERBOSITY terse

-- 3,000 docs of words drawn (deterministically) from a small vocabulary
CREATE TABLE docs (id int, title text, body text, color text, n int,
  embedding real[]);
CREATE FUNCTION pg_temp.words(seed int, k int) RETURNS text IMMUTABLE
LANGUAGE sql AS $$
  SELECT string_agg((ARRAY['red', 'shoes', 'running', 'runner', 'blue',
    'leather', 'boots', 'walking', 'trail', 'green', 'hat', 'summer',
    'winter', 'coat', 'warm', 'light', 'heavy', 'soft', 'cotton', 'wool',
    'jacket', 'rain', 'water', 'proof', 'city', 'mountain', 'classic',
    'sport', 'the', 'and'])[1 + (seed * 7919 + j * 104729 + j * j * 31) % 30],
    ' ' ORDER BY j)
  FROM generate_series(1, k) j $$;
INSERT INTO docs
  SELECT i, pg_temp.words(i, 2 + i % 3), pg_temp.words(i * 13 + 5, 5 + i % 8),
         (ARRAY['red', 'blue', 'green'])[1 + i % 3], i % 100,
         ARRAY[sin(i)::real, cos(i)::real, sin(2 * i)::real, cos(3 * i)::real]
  FROM generate_series(1, 3000) i;
UPDATE docs SET title = NULL WHERE id % 97 = 0;
SELECT ft.create('docs_idx', 'docs', 'id', 'embedding',
  text_fields => '{title, body}', language => 'english');
ANALYZE docs;
SELECT c.relname, pg_get_indexdef(c.oid) FROM pg_index i
  JOIN pg_class c ON c.oid = i.indexrelid
  WHERE i.indrelid = 'docs'::regclass ORDER BY 1;

-- the reference: the tsvector of both fields
CREATE FUNCTION pg_temp.tsv(d docs) RETURNS tsvector IMMUTABLE LANGUAGE sql
  AS $$ SELECT to_tsvector('english', coalesce(d.title, '') || ' ' || coalesce(d.body, '')) $$;

-- (id, score) pairs, in order, of ft.query with WITHSCORES
CREATE FUNCTION pg_temp.ft(q text) RETURNS text[] LANGUAGE sql AS $$
  SELECT array_agg(id || ':' || (fields ->> '__score') ORDER BY ord)
  FROM ft.query('docs_idx', q, '{"WITHSCORES": true, "RETURN": []}')
    WITH ORDINALITY s(id, distance, fields, ord) $$;
-- the same of a hand-written query returning (id, score) in order
CREATE FUNCTION pg_temp.ref(sql text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  r text[];
BEGIN
  EXECUTE 'SELECT array_agg(id || '':'' || score ORDER BY ord) FROM (' ||
    'SELECT s.*, row_number() OVER () AS ord FROM (' || sql || ') s) x'
    INTO r;
  RETURN r;
END
$$;

CREATE TABLE text_cases (n serial, q text, ref text);
INSERT INTO text_cases (q, ref) VALUES
 ('running',
  $$SELECT id, ts_rank_cd(pg_temp.tsv(d), to_tsquery('english', 'running')) AS score
    FROM docs d WHERE pg_temp.tsv(d) @@ to_tsquery('english', 'running')
    ORDER BY score DESC, id LIMIT 10$$),
 ('red shoes',
  $$SELECT id, ts_rank_cd(pg_temp.tsv(d), to_tsquery('english', 'red | shoes')) AS score
    FROM docs d WHERE pg_temp.tsv(d) @@ to_tsquery('english', 'red & shoes')
    ORDER BY score DESC, id LIMIT 10$$),
 ('red | shoes LIMIT 20 10',
  $$SELECT id, ts_rank_cd(pg_temp.tsv(d), to_tsquery('english', 'red | shoes')) AS score
    FROM docs d WHERE pg_temp.tsv(d) @@ to_tsquery('english', 'red | shoes')
    ORDER BY score DESC, id LIMIT 10 OFFSET 20$$),
 ('warm -wool -coat',
  $$SELECT id, ts_rank_cd(pg_temp.tsv(d), to_tsquery('english', 'warm')) AS score
    FROM docs d WHERE pg_temp.tsv(d) @@ to_tsquery('english', 'warm & !wool & !coat')
    ORDER BY score DESC, id LIMIT 10$$),
 ('"leather walking"',
  $$SELECT id, ts_rank_cd(pg_temp.tsv(d), to_tsquery('english', 'leather <-> walking')) AS score
    FROM docs d WHERE pg_temp.tsv(d) @@ to_tsquery('english', 'leather <-> walking')
    ORDER BY score DESC, id LIMIT 10$$),
 ('walk* trail',
  $$SELECT id, ts_rank_cd(pg_temp.tsv(d), to_tsquery('english', 'walk:* | trail')) AS score
    FROM docs d WHERE pg_temp.tsv(d) @@ to_tsquery('english', 'walk:* & trail')
    ORDER BY score DESC, id LIMIT 10$$),
 ('@title:(trail hat)',
  $$SELECT id, ts_rank_cd(pg_temp.tsv(d), to_tsquery('english', 'trail | hat')) AS score
    FROM docs d WHERE to_tsvector('english', coalesce(title, '')) @@ to_tsquery('english', 'trail & hat')
    ORDER BY score DESC, id LIMIT 10$$),
 ('@title:hat @body:(summer | winter)',
  $$SELECT id, ts_rank_cd(pg_temp.tsv(d), to_tsquery('english', 'hat | summer | winter')) AS score
    FROM docs d WHERE to_tsvector('english', coalesce(title, '')) @@ to_tsquery('english', 'hat')
      AND to_tsvector('english', coalesce(body, '')) @@ to_tsquery('english', 'summer | winter')
    ORDER BY score DESC, id LIMIT 10$$),
 ('cotton @color:{blue} @n:[10 40]',
  $$SELECT id, ts_rank_cd(pg_temp.tsv(d), to_tsquery('english', 'cotton')) AS score
    FROM docs d WHERE pg_temp.tsv(d) @@ to_tsquery('english', 'cotton')
      AND color = 'blue' AND n BETWEEN 10 AND 40
    ORDER BY score DESC, id LIMIT 10$$),
 ('sport ~classic',
  $$SELECT id, ts_rank_cd(pg_temp.tsv(d), to_tsquery('english', 'sport | classic')) AS score
    FROM docs d WHERE pg_temp.tsv(d) @@ to_tsquery('english', 'sport')
    ORDER BY score DESC, id LIMIT 10$$),
 ('(light | heavy) jacket SORTBY n DESC',
  $$SELECT id, ts_rank_cd(pg_temp.tsv(d), to_tsquery('english', 'light | heavy | jacket')) AS score
    FROM docs d WHERE pg_temp.tsv(d) @@ to_tsquery('english', '(light | heavy) & jacket')
    ORDER BY n DESC, id LIMIT 10$$),
 ('mountain SORTBY __score ASC',
  $$SELECT id, ts_rank_cd(pg_temp.tsv(d), to_tsquery('english', 'mountain')) AS score
    FROM docs d WHERE pg_temp.tsv(d) @@ to_tsquery('english', 'mountain')
    ORDER BY score ASC, id LIMIT 10$$),
 ('city SCORER TFIDF',
  $$SELECT id, ts_rank(pg_temp.tsv(d), to_tsquery('english', 'city')) AS score
    FROM docs d WHERE pg_temp.tsv(d) @@ to_tsquery('english', 'city')
    ORDER BY score DESC, id LIMIT 10$$),
 ('city SCORER TFIDF.DOCNORM',
  $$SELECT id, ts_rank(pg_temp.tsv(d), to_tsquery('english', 'city'), 2) AS score
    FROM docs d WHERE pg_temp.tsv(d) @@ to_tsquery('english', 'city')
    ORDER BY score DESC, id LIMIT 10$$),
 ('city SCORER BM25STD',
  $$SELECT id, ts_rank_cd(pg_temp.tsv(d), to_tsquery('english', 'city')) AS score
    FROM docs d WHERE pg_temp.tsv(d) @@ to_tsquery('english', 'city')
    ORDER BY score DESC, id LIMIT 10$$),
 ('*ater',
  $$SELECT id, 0::real AS score FROM docs d
    WHERE EXISTS (SELECT FROM unnest(tsvector_to_array(to_tsvector('simple',
      coalesce(title, '') || ' ' || coalesce(body, '')))) w WHERE w LIKE '%ater')
    ORDER BY score DESC, id LIMIT 10$$),
 ('proof *ool*',
  $$SELECT id, ts_rank_cd(pg_temp.tsv(d), to_tsquery('english', 'proof')) AS score
    FROM docs d WHERE pg_temp.tsv(d) @@ to_tsquery('english', 'proof')
      AND EXISTS (SELECT FROM unnest(tsvector_to_array(to_tsvector('simple',
      coalesce(title, '') || ' ' || coalesce(body, '')))) w WHERE w LIKE '%ool%')
    ORDER BY score DESC, id LIMIT 10$$),
 ('-(red | blue | green | the) LIMIT 0 5',
  $$SELECT id, 0::real AS score
    FROM docs d WHERE NOT pg_temp.tsv(d) @@ to_tsquery('english', 'red | blue | green')
    ORDER BY score DESC, id LIMIT 5$$);

SELECT n, q, pg_temp.ft(q) IS NOT DISTINCT FROM pg_temp.ref(ref) AS same,
       cardinality(pg_temp.ft(q)) AS rows
  FROM text_cases ORDER BY n;

-- all matches, not only the first page
SELECT (SELECT count(*) FROM ft.query('docs_idx', 'soft LIMIT 0 3000')) =
       (SELECT count(*) FROM docs d WHERE pg_temp.tsv(d) @@ to_tsquery('english', 'soft'))
       AS same_count;
-- scores are ts_rank_cd's, as numbers
SELECT id, fields FROM ft.query('docs_idx', 'leather boots WITHSCORES RETURN 1 title LIMIT 0 2');

-- the GIN index serves a query over all TEXT fields
SET enable_seqscan = off;
SELECT line FROM ft.explain('docs_idx', 'running shoes') AS e(line)
  WHERE line ~ 'Bitmap|Index';
-- and, as a first test, one restricted to some fields (a match in the
-- title is a match in title and body)
SELECT count(*) AS index_scans FROM ft.explain('docs_idx', '@title:(trail hat)') AS e(line)
  WHERE line ~ 'Bitmap Index Scan on docs_idx_text';
RESET enable_seqscan;

-- fuzzy terms: neither extension, pg_trgm (trigram similarity),
-- fuzzystrmatch (Levenshtein distance, as RediSearch)
SELECT count(*) FROM ft.query('docs_idx', '%runing%');
CREATE EXTENSION pg_trgm;
SELECT (SELECT array_agg(id::int ORDER BY id::int) FROM ft.query('docs_idx', '%runing% LIMIT 0 3000')) =
       (SELECT array_agg(id ORDER BY id) FROM docs d
         WHERE EXISTS (SELECT FROM unnest(tsvector_to_array(to_tsvector('simple',
           coalesce(title, '') || ' ' || coalesce(body, '')))) w WHERE w % 'runing'))
       AS trgm_same;
CREATE EXTENSION fuzzystrmatch;
SELECT (SELECT array_agg(id::int ORDER BY id::int) FROM ft.query('docs_idx', '%%wniter%% LIMIT 0 3000')) =
       (SELECT array_agg(id ORDER BY id) FROM docs d
         WHERE EXISTS (SELECT FROM unnest(tsvector_to_array(to_tsvector('simple',
           coalesce(title, '') || ' ' || coalesce(body, '')))) w
           WHERE levenshtein(w, 'wniter') <= 2))
       AS levenshtein_same,
       (SELECT count(*) FROM ft.query('docs_idx', '%%wniter%% LIMIT 0 3000')) AS rows;
DROP EXTENSION fuzzystrmatch;
DROP EXTENSION pg_trgm;

-- queued upserts are searched with the same terms (no background merge,
-- so that ft.flush applies the write)
SET segvec.background_merge = off;
SELECT ft.add('docs_idx', '5001', '{0,0,0,1}', '{"title": "zebra raincoat", "body": "striped"}') > 0 AS queued;
SELECT id FROM ft.query('docs_idx', 'zebra');
SELECT id FROM ft.query('docs_idx', '@body:striped');
SELECT (ft.flush('docs_idx')).inserted;
SELECT id FROM ft.query('docs_idx', 'zebra');

-- ft.alter: TEXT fields later, another language, none
CREATE TABLE notes (id int, note text, embedding real[]);
INSERT INTO notes VALUES (1, 'Die Katzen laufen', '{1,0}'), (2, 'the cats are running', '{0,1}');
SELECT ft.create('notes_idx', 'notes', 'id', 'embedding');
SELECT id FROM ft.query('notes_idx', 'cats');
SELECT ft.alter('notes_idx', text_fields => '{note}');
SELECT id FROM ft.query('notes_idx', 'cat');
SELECT id FROM ft.query('notes_idx', 'katze');
SELECT ft.alter('notes_idx', language => 'german');
SELECT id FROM ft.query('notes_idx', 'katze');
SELECT reloptions FROM pg_class WHERE relname = 'notes_idx';
SELECT pg_get_indexdef('notes_idx_text'::regclass);
SELECT ft.alter('notes_idx', text_fields => '{}');
SELECT to_regclass('notes_idx_text');
SELECT id FROM ft.query('notes_idx', 'katze');
SELECT ft.alter('notes_idx', text_fields => '{nosuch}');
SELECT ft.alter('notes_idx', language => 'klingon');
-- ft.dropindex takes the TEXT fields' GIN index along; the id btree stays
SELECT ft.alter('notes_idx', text_fields => '{note}');
SELECT to_regclass('notes_idx_text') IS NOT NULL AS gin_before;
SELECT ft.dropindex('notes_idx');
SELECT to_regclass('notes_idx_text') AS gin_after,
       to_regclass('notes_id_idx') IS NOT NULL AS btree_stays;
