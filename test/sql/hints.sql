-- Hints for the first errors a pgvector user meets (src/kernels/hints.c);
-- the ones that need pgvector installed are in pgvector/sql/.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;

-- pgvector's literal where a real[] is expected
SELECT '[1,2,3]'::real[];
SELECT l2_distance('[1,2]', '{3,4}');
-- braces work, and a literal not starting with '[' keeps PostgreSQL's message
SELECT l2_distance('{1,2}', '{3,4}');
SELECT '1,2,3'::real[];
-- pgvector's type without pgvector
CREATE TABLE hint_items (id int, embedding vector(3));
CREATE TABLE hint_items (id int, embedding halfvec(3));
-- another missing type keeps PostgreSQL's message
CREATE TABLE hint_items (id int, embedding vectr(3));
-- ft.query: a vector given as a string of pgvector's literal
CREATE TABLE hint_docs (id int PRIMARY KEY, embedding real[]);
INSERT INTO hint_docs VALUES (1, '{1,2,3}');
CREATE INDEX hint_docs_idx ON hint_docs USING segvec (embedding) INCLUDE (id);
SELECT * FROM ft.query('hint_docs_idx', '*=>[KNN 1 @embedding $v]', '{"v": "[1,2,3]"}');
SELECT id FROM ft.query('hint_docs_idx', '*=>[KNN 1 @embedding $v]', '{"v": [1,2,3]}');
DROP TABLE hint_docs;
