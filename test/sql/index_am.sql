-- The segvec access method and its operator classes
-- quietly: an earlier suite may have created it
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;

SELECT amname, amtype, obj_description(oid, 'pg_am') AS description
FROM pg_am WHERE amname = 'segvec';

-- the three vector operator classes, their operator and distance
-- function, and amvalidate's verdict on each (and on every class, the
-- filter columns' too)
SELECT c.opcname, c.opcdefault, c.opcintype::regtype,
       o.amopopr::regoperator AS operator, o.amoppurpose AS purpose,
       (SELECT opfname FROM pg_opfamily WHERE oid = o.amopsortfamily) AS sort_family,
       p.amproc::regprocedure AS distance_function,
       amvalidate(c.oid) AS valid
FROM pg_opclass c
     JOIN pg_amop o ON o.amopfamily = c.opcfamily
     JOIN pg_amproc p ON p.amprocfamily = c.opcfamily
WHERE c.opcmethod = (SELECT oid FROM pg_am WHERE amname = 'segvec')
ORDER BY c.opcname;
SELECT count(*) AS opclasses, bool_and(amvalidate(oid)) AS all_valid
FROM pg_opclass
WHERE opcmethod = (SELECT oid FROM pg_am WHERE amname = 'segvec');

-- operator classes amvalidate must reject: no distance function, and a
-- distance function of the wrong signature
CREATE OPERATOR CLASS am_bad1_ops FOR TYPE real[] USING segvec AS
    OPERATOR 1 <-> (real[], real[]) FOR ORDER BY float_ops;
CREATE OPERATOR CLASS am_bad2_ops FOR TYPE real[] USING segvec AS
    OPERATOR 1 <-> (real[], real[]) FOR ORDER BY float_ops,
    FUNCTION 1 l2_norm(real[]);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'am_bad1_ops';
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'am_bad2_ops';
DROP OPERATOR FAMILY am_bad1_ops USING segvec;
DROP OPERATOR FAMILY am_bad2_ops USING segvec;
-- support function 2 turns another type into real[]: one of the wrong
-- signature, and an operator class for a type without one
CREATE OPERATOR CLASS am_bad5_ops FOR TYPE real[] USING segvec AS
    OPERATOR 1 <-> (real[], real[]) FOR ORDER BY float_ops,
    FUNCTION 1 l2_distance(real[], real[]),
    FUNCTION 2 (int4[], int4[]) array_length(anyarray, int);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'am_bad5_ops';
DROP OPERATOR FAMILY am_bad5_ops USING segvec;
CREATE FUNCTION am_l2(int4[], int4[]) RETURNS float8 LANGUAGE sql
    AS 'SELECT 0::float8';
CREATE OPERATOR <-> (LEFTARG = int4[], RIGHTARG = int4[], FUNCTION = am_l2);
CREATE OPERATOR CLASS am_bad6_ops FOR TYPE int4[] USING segvec AS
    OPERATOR 1 <-> (int4[], int4[]) FOR ORDER BY float_ops,
    FUNCTION 1 l2_distance(real[], real[]);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'am_bad6_ops';
-- and an index on a column of a type segvec cannot read
CREATE TABLE am_ints (v int4[]);
INSERT INTO am_ints VALUES ('{1,2}');
CREATE INDEX ON am_ints USING segvec (v am_bad6_ops);
CREATE TABLE am_text (v text);
CREATE INDEX ON am_text USING segvec (v);
DROP TABLE am_ints, am_text;
DROP OPERATOR FAMILY am_bad6_ops USING segvec;
DROP OPERATOR <-> (int4[], int4[]);
DROP FUNCTION am_l2(int4[], int4[]);
-- five strategies (the ordering operator; btree's for filter columns) and
-- two support functions exist
\set VERBOSITY terse
CREATE OPERATOR CLASS am_bad3_ops FOR TYPE real[] USING segvec AS
    OPERATOR 6 <-> (real[], real[]) FOR ORDER BY float_ops;
CREATE OPERATOR CLASS am_bad4_ops FOR TYPE real[] USING segvec AS
    OPERATOR 1 <-> (real[], real[]) FOR ORDER BY float_ops,
    FUNCTION 3 l2_distance(real[], real[]);
\set VERBOSITY default

-- what the access method says it can do
SELECT p.name, pg_indexam_has_property(a.oid, p.name) AS value
FROM pg_am a,
     unnest(ARRAY['can_order', 'can_unique', 'can_multi_col']) p(name)
WHERE a.amname = 'segvec';
CREATE TABLE am_items (id int, embedding real[]);
CREATE INDEX am_items_idx ON am_items USING segvec (embedding);
SELECT p.name, pg_index_has_property('am_items_idx'::regclass, p.name) AS value
FROM unnest(ARRAY['clusterable', 'index_scan', 'bitmap_scan',
                  'backward_scan']) p(name);
SELECT p.name, pg_index_column_has_property('am_items_idx'::regclass, 1, p.name) AS value
FROM unnest(ARRAY['asc', 'desc', 'nulls_first', 'nulls_last', 'orderable',
                  'returnable', 'search_nulls']) p(name);
-- "col = ANY (array)" is an index condition from PostgreSQL 17 on, whose
-- planner keeps an ordered scan's ordering with one on a later column
SELECT pg_index_column_has_property('am_items_idx'::regclass, 1, 'search_array')
       = (current_setting('server_version_num')::int >= 170000)
       AS search_array_from_17;

-- no CLUSTER
\set VERBOSITY terse
CLUSTER am_items USING am_items_idx;
\set VERBOSITY default

DROP TABLE am_items;
