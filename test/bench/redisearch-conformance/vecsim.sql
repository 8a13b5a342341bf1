-- Restated from RediSearch's tests/pytests/test_vecsim.py (commit 075d9f364f):
-- the data each test loads and the answers its assertions give, as
-- data.  Written by gen_vecsim.py (the tests' formulas for the expected
-- ids and distances); included by conformance.sql after cases.sql.
-- test_vecsim.py::test_sanity_cosine, test_sanity_l2: a..d = [0.1, 0.1 .. 0.4];
-- the *_del tables after DEL b
CREATE TABLE rs.vcos (k text, v real[]);
INSERT INTO rs.vcos VALUES ('a', '{0.1, 0.1}'), ('b', '{0.1, 0.2}'), ('c', '{0.1, 0.3}'), ('d', '{0.1, 0.4}');
SELECT ft.create('vcos_idx', 'rs.vcos', 'k', 'v', metric => 'cosine') IS NOT NULL;
CREATE TABLE rs.vcos_del (k text, v real[]);
INSERT INTO rs.vcos_del VALUES ('a', '{0.1, 0.1}'), ('c', '{0.1, 0.3}'), ('d', '{0.1, 0.4}');
SELECT ft.create('vcos_del_idx', 'rs.vcos_del', 'k', 'v', metric => 'cosine') IS NOT NULL;
CREATE TABLE rs.vl2 (k text, v real[]);
INSERT INTO rs.vl2 VALUES ('a', '{0.1, 0.1}'), ('b', '{0.1, 0.2}'), ('c', '{0.1, 0.3}'), ('d', '{0.1, 0.4}');
SELECT ft.create('vl2_idx', 'rs.vl2', 'k', 'v', metric => 'l2') IS NOT NULL;
CREATE TABLE rs.vl2_del (k text, v real[]);
INSERT INTO rs.vl2_del VALUES ('a', '{0.1, 0.1}'), ('c', '{0.1, 0.3}'), ('d', '{0.1, 0.4}');
SELECT ft.create('vl2_del_idx', 'rs.vl2_del', 'k', 'v', metric => 'l2') IS NOT NULL;
-- test_vecsim.py::test_sanity_zero_results (n NUMERIC; the test's random vectors fixed)
CREATE TABLE rs.vzero (k text, n int, v real[]);
INSERT INTO rs.vzero VALUES ('a', 10, '{0.1,0.7,0.3,0.9}'), ('b', 11, '{0.5,0.2,0.8,0.4}'),
 ('c', 12, '{0.9,0.1,0.6,0.2}'), ('d', 13, '{0.3,0.3,0.3,0.3}');
SELECT ft.create('vzero_idx', 'rs.vzero', 'k', 'v') IS NOT NULL;
-- test_vecsim.py::test_search_ints (a..d = [40]*4 .. [10]*4); test_del_reuse
-- (4 arbitrary vectors; the test draws them at random)
CREATE TABLE rs.vints (k text, v real[]);
INSERT INTO rs.vints VALUES ('a', '{40,40,40,40}'), ('b', '{30,30,30,30}'), ('c', '{20,20,20,20}'), ('d', '{10,10,10,10}');
SELECT ft.create('vints_idx', 'rs.vints', 'k', 'v') IS NOT NULL;
CREATE TABLE rs.vdel (k text, v real[]);
INSERT INTO rs.vdel VALUES ('a', '{0.9,0.2}'), ('b', '{0.1,0.8}'), ('c', '{0.5,0.5}'), ('d', '{0.3,0.1}');
SELECT ft.create('vdel_idx', 'rs.vdel', 'k', 'v') IS NOT NULL;
-- test_vecsim.py::test_search_errors (s TEXT, t TAG, v: [i, i])
CREATE TABLE rs.verr (k int, s text, t text, v real[]);
INSERT INTO rs.verr SELECT i, 'hello', NULL, ARRAY[i, i] FROM generate_series(0, 3) i;
SELECT ft.create('verr_idx', 'rs.verr', 'k', 'v', text_fields => '{s}') IS NOT NULL;
-- test_vecsim.py::test_with_fields, test_hybrid_query_non_vector_score,
-- test_hybrid_query_adhoc_bf_mode: 128 dims, doc i = [i]*128, t 'text value';
-- vwf2: docs 10, 20, .., 100 have t 'other'
CREATE TABLE rs.vwf (k int, t text, v real[]);
INSERT INTO rs.vwf SELECT i, 'text value', array_fill(i::real, ARRAY[128]) FROM generate_series(1, 100) i;
SELECT ft.create('vwf_idx', 'rs.vwf', 'k', 'v', text_fields => '{t}') IS NOT NULL;
CREATE TABLE rs.vwf2 (k int, t text, v real[]);
INSERT INTO rs.vwf2 SELECT i, CASE WHEN i % 10 = 0 THEN 'other' ELSE 'text value' END, array_fill(i::real, ARRAY[128]) FROM generate_series(1, 100) i;
SELECT ft.create('vwf2_idx', 'rs.vwf2', 'k', 'v', text_fields => '{t}') IS NOT NULL;
-- test_vecsim.py::test_hybrid_query_batches_mode_with_text: doc i = [i, i],
-- t 'text value'; hbt2: docs 5, 10, .., 6000 have t 'other'
CREATE TABLE rs.hbt1 (k int, t text, v real[]);
INSERT INTO rs.hbt1 SELECT i, 'text value', ARRAY[i, i] FROM generate_series(1, 6000) i;
SELECT ft.create('hbt1_idx', 'rs.hbt1', 'k', 'v', text_fields => '{t}') IS NOT NULL;
CREATE TABLE rs.hbt2 (k int, t text, v real[]);
INSERT INTO rs.hbt2 SELECT i, CASE WHEN i % 5 = 0 THEN 'other' ELSE 'text value' END, ARRAY[i, i] FROM generate_series(1, 6000) i;
SELECT ft.create('hbt2_idx', 'rs.hbt2', 'k', 'v', text_fields => '{t}') IS NOT NULL;
-- test_vecsim.py::test_hybrid_query_batches_mode_with_tags: doc i = [i, i],
-- tags 'hybrid', text 'text'; hbg2: docs 5, 10, .. have tags 'different, tag'
CREATE TABLE rs.hbg1 (k int, tags text[], text text, v real[]);
INSERT INTO rs.hbg1 SELECT i, '{hybrid}', 'text', ARRAY[i, i] FROM generate_series(1, 6000) i;
SELECT ft.create('hbg1_idx', 'rs.hbg1', 'k', 'v', text_fields => '{text}') IS NOT NULL;
CREATE TABLE rs.hbg2 (k int, tags text[], text text, v real[]);
INSERT INTO rs.hbg2 SELECT i, CASE WHEN i % 5 = 0 THEN '{different,tag}'::text[] ELSE '{hybrid}' END, 'text', ARRAY[i, i] FROM generate_series(1, 6000) i;
SELECT ft.create('hbg2_idx', 'rs.hbg2', 'k', 'v', text_fields => '{text}') IS NOT NULL;
-- test_vecsim.py::test_hybrid_query_with_numeric: doc i = [i, i], num i
CREATE TABLE rs.hnum (k int, num int, v real[]);
INSERT INTO rs.hnum SELECT i, i, ARRAY[i, i] FROM generate_series(1, 6000) i;
SELECT ft.create('hnum_idx', 'rs.hnum', 'k', 'v') IS NOT NULL;
-- test_vecsim.py::test_hybrid_query_batches_mode_with_complex_queries (dim 4, num, t1, t2)
CREATE TABLE rs.hcx (k int, num int, t1 text, t2 text, v real[]);
INSERT INTO rs.hcx VALUES (1, 1, 'text value', 'hybrid query', '{1,1,1,1}'),
 (2, 2, 'text value', 'hybrid query', '{10,10,10,10}'), (3, 3, 'other', 'hybrid query', '{10,10,10,10}'),
 (4, 4, 'other', 'hybrid query', '{1,1,1,1}');
INSERT INTO rs.hcx SELECT i, i, 'text value', 'hybrid query', array_fill(i::real, ARRAY[4]) FROM generate_series(5, 6000) i;
SELECT ft.create('hcx_idx', 'rs.hcx', 'k', 'v', text_fields => '{t1, t2}') IS NOT NULL;
-- test_vecsim.py::test_hybrid_query_cosine: doc i = [i/6000, 1, 1, 1], t 'text value';
-- hcos2: docs 10, 20, .. have t 'other'
CREATE TABLE rs.hcos1 (k int, t text, v real[]);
INSERT INTO rs.hcos1 SELECT i, 'text value', ARRAY[i / 6000.0, 1, 1, 1] FROM generate_series(1, 6000) i;
SELECT ft.create('hcos1_idx', 'rs.hcos1', 'k', 'v', metric => 'cosine', text_fields => '{t}') IS NOT NULL;
CREATE TABLE rs.hcos2 (k int, t text, v real[]);
INSERT INTO rs.hcos2 SELECT i, CASE WHEN i % 10 = 0 THEN 'other' ELSE 'text value' END, ARRAY[i / 6000.0, 1, 1, 1] FROM generate_series(1, 6000) i;
SELECT ft.create('hcos2_idx', 'rs.hcos2', 'k', 'v', metric => 'cosine', text_fields => '{t}') IS NOT NULL;
-- test_vecsim.py::test_hybrid_query_with_global_filters: doc i = [i, i], t 'hybrid',
-- docs 5, 10, .. t 'other' (the second phase)
CREATE TABLE rs.hgf (k int, t text, num int, v real[]);
INSERT INTO rs.hgf SELECT i, CASE WHEN i % 5 = 0 THEN 'other' ELSE 'hybrid' END, i, ARRAY[i, i] FROM generate_series(1, 1000) i;
SELECT ft.create('hgf_idx', 'rs.hgf', 'k', 'v', text_fields => '{t}') IS NOT NULL;
-- test_vecsim.py::test_range_query_basic: dim 4, doc i = [i]*4 for i in 1..99 (vrq0: empty)
CREATE TABLE rs.vrq0 (k int, t text, v real[]);
SELECT ft.create('vrq0_idx', 'rs.vrq0', 'k', 'v', dimensions => 4) IS NOT NULL;
CREATE TABLE rs.vrq (k int, t text, v real[]);
INSERT INTO rs.vrq SELECT i, 'text value', array_fill(i::real, ARRAY[4]) FROM generate_series(1, 99) i;
SELECT ft.create('vrq_idx', 'rs.vrq', 'k', 'v', text_fields => '{t}') IS NOT NULL;
-- test_vecsim.py::test_range_query_complex_queries: dim 128, doc i = [i]*128, t 'text', num i;
-- docs 5, 10, .. t 'other', num -i (vrc2: then doc 1000 t 'unique')
CREATE TABLE rs.vrc (k int, t text, num int, v real[]);
INSERT INTO rs.vrc SELECT i, CASE WHEN i % 5 = 0 THEN 'other' ELSE 'text' END, CASE WHEN i % 5 = 0 THEN -i ELSE i END, array_fill(i::real, ARRAY[128]) FROM generate_series(1, 1000) i;
SELECT ft.create('vrc_idx', 'rs.vrc', 'k', 'v', text_fields => '{t}') IS NOT NULL;
CREATE TABLE rs.vrc2 (k int, t text, num int, v real[]);
INSERT INTO rs.vrc2 SELECT i, CASE WHEN i = 1000 THEN 'unique' WHEN i % 5 = 0 THEN 'other' ELSE 'text' END, CASE WHEN i % 5 = 0 THEN -i ELSE i END, array_fill(i::real, ARRAY[128]) FROM generate_series(1, 1000) i;
SELECT ft.create('vrc2_idx', 'rs.vrc2', 'k', 'v', text_fields => '{t}') IS NOT NULL;
-- test_vecsim.py::test_multiple_range_queries: dim 16, v_flat and v_hnsw both [i]*16,
-- t 'text' ('other' for i % 5 = 0), num i; the segvec index is on v_hnsw
CREATE TABLE rs.vmr (k int, t text, num int, v_flat real[], v_hnsw real[]);
INSERT INTO rs.vmr SELECT i, CASE WHEN i % 5 = 0 THEN 'other' ELSE 'text' END, i, array_fill(i::real, ARRAY[16]), array_fill(i::real, ARRAY[16]) FROM generate_series(1, 100) i;
SELECT ft.create('vmr_idx', 'rs.vmr', 'k', 'v_hnsw', text_fields => '{t}') IS NOT NULL;
-- test_vecsim.py::test_query_with_knn_substr: doc<i> = [i, i], t 'knn' (odd i) or 'val'
CREATE TABLE rs.vks (k text, t text, v real[]);
INSERT INTO rs.vks SELECT 'doc' || i, CASE WHEN i % 2 = 1 THEN 'knn' ELSE 'val' END, ARRAY[i, i] FROM generate_series(0, 9) i;
SELECT ft.create('vks_idx', 'rs.vks', 'k', 'v', text_fields => '{t}') IS NOT NULL;
-- test_vecsim.py::test_score_name_case_sensitivity, test_max_knn_k: doc<i> = [i, i] in field VEC
CREATE TABLE rs.vsn (k text, "VEC" real[]);
INSERT INTO rs.vsn SELECT 'doc' || i, ARRAY[i, i] FROM generate_series(0, 9) i;
SELECT ft.create('vsn_idx', 'rs.vsn', 'k', 'VEC') IS NOT NULL;

INSERT INTO rs.cases (src, text, idx, kind, q, p, expect) VALUES
 ('vecsim:sanity_cosine', false, 'vcos_idx', 'd', '*=>[KNN 4 @v $blob AS dist] SORTBY dist RETURN 1 dist', '{"blob": [0.1, 0.1]}'::jsonb, 'a:2.220446049250313e-16,b:0.05131670194948634,c:0.10557280900008426,d:0.1425070742874559'),
 ('vecsim:sanity_cosine', false, 'vcos_idx', 'd', '*=>[KNN 4 @v $blob]=>{$yield_distance_as:dist} SORTBY dist RETURN 1 dist', '{"blob": [0.1, 0.1]}'::jsonb, 'a:2.220446049250313e-16,b:0.05131670194948634,c:0.10557280900008426,d:0.1425070742874559'),
 ('vecsim:sanity_cosine', false, 'vcos_idx', 'd', '@v:[VECTOR_RANGE 0.1425080742874559 $blob]=>{$yield_distance_as:dist} SORTBY dist RETURN 1 dist', '{"blob": [0.1, 0.1]}'::jsonb, 'a:2.220446049250313e-16,b:0.05131670194948634,c:0.10557280900008426,d:0.1425070742874559'),
 ('vecsim:sanity_cosine', false, 'vcos_idx', 'd', '*=>[KNN 4 @v $blob AS dist] SORTBY dist RETURN 1 dist', '{"blob": [0.1, 0.2]}'::jsonb, 'b:0,c:0.010050506338833531,d:0.023812939816047263,a:0.05131670194948634'),
 ('vecsim:sanity_cosine', false, 'vcos_idx', 'd', '*=>[KNN 4 @v $blob]=>{$yield_distance_as:dist} SORTBY dist RETURN 1 dist', '{"blob": [0.1, 0.2]}'::jsonb, 'b:0,c:0.010050506338833531,d:0.023812939816047263,a:0.05131670194948634'),
 ('vecsim:sanity_cosine', false, 'vcos_idx', 'd', '@v:[VECTOR_RANGE 0.051317701949486344 $blob]=>{$yield_distance_as:dist} SORTBY dist RETURN 1 dist', '{"blob": [0.1, 0.2]}'::jsonb, 'b:0,c:0.010050506338833531,d:0.023812939816047263,a:0.05131670194948634'),
 ('vecsim:sanity_cosine', false, 'vcos_del_idx', 'd', '*=>[KNN 4 @v $blob AS dist] SORTBY dist RETURN 1 dist', '{"blob": [0.1, 0.2]}'::jsonb, 'c:0.010050506338833531,d:0.023812939816047263,a:0.05131670194948634'),
 ('vecsim:sanity_cosine', false, 'vcos_del_idx', 'd', '@v:[VECTOR_RANGE 0.051317701949486344 $blob]=>{$yield_distance_as: dist} SORTBY dist RETURN 1 dist', '{"blob": [0.1, 0.2]}'::jsonb, 'c:0.010050506338833531,d:0.023812939816047263,a:0.05131670194948634'),
 ('vecsim:sanity_l2', false, 'vl2_idx', 'd', '*=>[KNN 4 @v $blob]=>{$yield_distance_as: dist} SORTBY dist RETURN 1 dist', '{"blob": [0.1, 0.1]}'::jsonb, 'a:0,b:0.010000000000000002,c:0.039999999999999994,d:0.09000000000000002'),
 ('vecsim:sanity_l2', false, 'vl2_idx', 'd', '@v:[VECTOR_RANGE 0.09000100000000003 $blob]=>{$yield_distance_as: dist} SORTBY dist RETURN 1 dist', '{"blob": [0.1, 0.1]}'::jsonb, 'a:0,b:0.010000000000000002,c:0.039999999999999994,d:0.09000000000000002'),
 ('vecsim:sanity_l2', false, 'vl2_idx', 'd', '*=>[KNN 4 @v $blob AS dist] SORTBY dist RETURN 1 dist', '{"blob": [0.1, 0.19]}'::jsonb, 'b:0.00010000000000000018,a:0.0081,c:0.012099999999999998,d:0.04410000000000001'),
 ('vecsim:sanity_l2', false, 'vl2_idx', 'd', '@v:[VECTOR_RANGE 0.04410100000000001 $blob]=>{$yield_distance_as: dist} SORTBY dist RETURN 1 dist', '{"blob": [0.1, 0.19]}'::jsonb, 'b:0.00010000000000000018,a:0.0081,c:0.012099999999999998,d:0.04410000000000001'),
 ('vecsim:sanity_l2', false, 'vl2_del_idx', 'd', '*=>[KNN 4 @v $blob AS dist] SORTBY dist RETURN 1 dist', '{"blob": [0.1, 0.19]}'::jsonb, 'a:0.0081,c:0.012099999999999998,d:0.04410000000000001'),
 ('vecsim:sanity_l2', false, 'vl2_del_idx', 'd', '@v:[VECTOR_RANGE 0.04410100000000001 $blob]=>{$yield_distance_as: dist} SORTBY dist RETURN 1 dist', '{"blob": [0.1, 0.19]}'::jsonb, 'a:0.0081,c:0.012099999999999998,d:0.04410000000000001'),
 ('vecsim:sanity_zero_results', false, 'vzero_idx', 'o', '*=>[KNN 0 @v $blob AS dist]', '{"blob": [0.4, 0.6, 0.2, 0.5]}'::jsonb, ''),
 ('vecsim:sanity_zero_results', false, 'vzero_idx', 'o', '*=>[KNN $K @v $blob AS dist]', '{"blob": [0.4, 0.6, 0.2, 0.5], "K": 0}'::jsonb, ''),
 ('vecsim:sanity_zero_results', false, 'vzero_idx', 'o', '*=>[KNN 0 @v $blob AS dist] SORTBY dist RETURN 1 dist LIMIT 0 10', '{"blob": [0.4, 0.6, 0.2, 0.5]}'::jsonb, ''),
 ('vecsim:sanity_zero_results', false, 'vzero_idx', 'o', '@n:[0 10]=>[KNN 0 @v $blob AS dist]', '{"blob": [0.4, 0.6, 0.2, 0.5]}'::jsonb, ''),
 ('vecsim:sanity_zero_results', false, 'vzero_idx', 'o', '@n:[0 10]=>[KNN $K @v $blob AS dist]', '{"blob": [0.4, 0.6, 0.2, 0.5], "K": 0}'::jsonb, ''),
 ('vecsim:sanity_zero_results', false, 'vzero_idx', 'o', '@n:[0 10]=>[KNN 0 @v $blob AS dist] SORTBY dist RETURN 1 dist LIMIT 0 10', '{"blob": [0.4, 0.6, 0.2, 0.5]}'::jsonb, ''),
 ('vecsim:search_ints', false, 'vints_idx', 'd', '*=>[KNN 4 @v $blob AS score] RETURN 1 score', '{"blob": [0, 0, 0, 0]}'::jsonb, 'a:6400,b:3600,c:1600,d:400'),
 ('vecsim:search_ints', false, 'vints_idx', 'd', '*=>[KNN 4 @v $blob AS score] SORTBY score RETURN 1 score', '{"blob": [0, 0, 0, 0]}'::jsonb, 'd:400,c:1600,b:3600,a:6400'),
 ('vecsim:del_reuse', false, 'vdel_idx', 'o', '*=>[KNN 4 @v $b] RETURN 1 v', '{"b": [0.2, 0.3]}'::jsonb, 'a,b,c,d'),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[REDIS 4 @v $b]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN str @v $b]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[K 4 @v $b]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b]', '{"b": "YWJjZGVmZw=="}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b]', '{"b": "YWJjZGVmZ2hp"}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @t $b]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b AS v]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b AS s]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b AS t]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b AS $score]', '{"b": [1, 2], "score": "t"}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b]=>{$yield_distance_as:v;}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b EF_RUNTIME -42]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b EF_RUNTIME 2.71828]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b EF_RUNTIME 5 EF_RUNTIME 6]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b EF_FUNTIME 30]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b]=>{$EF_RUNTIME: 5; $EF_RUNTIME: 6;}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b RERANK TRUE]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b]=>{$RERANK: TRUE;}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b BATCH_SIZE 100]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b HYBRID_POLICY ADHOC_BF]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b HYBRID_POLICY BATCHES]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b HYBRID_POLICY BATCHES BATCH_SIZE 100]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@s:hello=>[KNN 2 @v $b BATCH_SIZE 0]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@s:hello=>[KNN 2 @v $b BATCH_SIZE -6]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@s:hello=>[KNN 2 @v $b BATCH_SIZE 34_not_a_number]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@s:hello=>[KNN 2 @v $b BATCH_SIZE 8 BATCH_SIZE 0]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@s:hello=>[KNN 2 @v $b HYBRID_POLICY bad_policy]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@s:hello=>[KNN 2 @v $b]=>{$HYBRID_POLICY: bad_policy;}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@s:hello=>[KNN 2 @v $b HYBRID_POLICY ADHOC_BF BATCH_SIZE 100]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@s:hello=>[KNN 2 @v $b HYBRID_POLICY ADHOC_BF EF_RUNTIME 100]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b AS score]=>{$yield_distance_as:score2;}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b EF_RUNTIME 100]=>{$EF_RUNTIME:200;}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b AS $score_1]=>{$yield_distance_as:$score_2;}', '{"b": [1, 2], "score_1": "score_1_val", "score_2": "score_2_val"}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', 'hello=>[KNN 2 @v $b AS score]=>{$yield_distance_as:__v_score;}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', 'hello=>[KNN 2 @v $b AS score]=>{$yield_distance_as:score;}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b]=>{$shard_k_ratio: invalid;}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b]=>{$bogus_vec_param: 42;}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@v:[vector_range 0.1 $b]', '{"b": "YWJjZGVmZw=="}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@v:[vector_range 0.1 $b]', '{"b": "YWJjZGVmZ2hp"}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@bad:[vector_range 0.1 $b]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@v:[vector 0.1 $b]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@v:[vector_range -1 $b]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@v:[vector_range 0.1 $b]=>{$yield_distance_as:t}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@v:[vector_range 0.1 $b]=>{$yield_distance_as:dist} @v:[vector_range 0.2 $b]=>{$yield_distance_as:dist}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@v:[vector_range 0.1 $b]=>{$yield_distance_as:$dist}', '{"b": [1, 2], "dist": "t"}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@v:[vector_range 0.1 $b]=>{$EF_RUNTIME:10}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@v:[vector_range 0.1 $b]=>{$HYBRID_POLICY:BATCHES}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@v:[vector_range 0.1 $b]=>{$EPSILON: -1}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@v:[vector_range 0.1 $b]=>{$EPSILON: 0}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@v:[vector_range 0.1 $b]=>{$EPSILON: not_a_num}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@v:[vector_range 0.1 $b]=>{$EPSILON: 0.1; $EPSILON: 0.2}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@v:[vector_range 0.1 $b]=>{$EPSILON: 0.1; $EF_RUNTIME: 20}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b EPSILON 2.71828]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 2 @v $b]=>{$EPSILON: 2.71828}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@s:hello=>[KNN 2 @v $b]=>{$EPSILON: 0.1}', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 576460752303423488 @v $b AS score]', '{"b": [1, 2]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '*=>[KNN 10 @v $BLOB] DIALECT 1', '{"BLOB": [1, 1]}'::jsonb, NULL),
 ('vecsim:search_errors', false, 'verr_idx', 'e', '@v:[VECTOR_RANGE 10 $BLOB] DIALECT 1', '{"BLOB": [1, 1]}'::jsonb, NULL),
 ('vecsim:with_fields', false, 'vwf_idx', 'o', '*=>[KNN 100 @v $vec_param AS score] SORTBY score RETURN 2 score t', jsonb_build_object('vec_param', to_jsonb(array_fill(0.5::real, ARRAY[128]))), '1,2,3,4,5,6,7,8,9,10'),
 ('vecsim:with_fields', false, 'vwf_idx', 'o', '*=>[KNN 100 @v $vec_param AS score] SORTBY score NOCONTENT', jsonb_build_object('vec_param', to_jsonb(array_fill(0.5::real, ARRAY[128]))), '1,2,3,4,5,6,7,8,9,10'),
 ('vecsim:with_fields', false, 'vwf_idx', 'o', '@v:[VECTOR_RANGE $r $vec_param]=>{$YIELD_DISTANCE_AS:score} SORTBY score RETURN 2 score t', jsonb_build_object('vec_param', to_jsonb(array_fill(0.5::real, ARRAY[128]))) || jsonb_build_object('r', 1280000), '1,2,3,4,5,6,7,8,9,10'),
 ('vecsim:with_fields', false, 'vwf_idx', 'e', '*=>[KNN 100 @not_a_field $vec_param]', jsonb_build_object('vec_param', to_jsonb(array_fill(0.5::real, ARRAY[128]))), NULL),
 ('vecsim:with_fields', false, 'vwf_idx', 'e', '*=>[KNN 100 @not_a_field $vec_param AS score] SORTBY score', jsonb_build_object('vec_param', to_jsonb(array_fill(0.5::real, ARRAY[128]))), NULL),
 ('vecsim:with_fields', false, 'vwf_idx', 'e', '@not_a_field:(vectors are cool)', NULL, NULL),
 ('vecsim:hybrid_query_non_vector_score', true, 'vwf2_idx', 'o', '((text ~"value")|other)=>[KNN 10 @v $vec_param] WITHSCORES SCORER TFIDF RETURN 2 t __v_score LIMIT 0 10', jsonb_build_object('vec_param', to_jsonb(array_fill(100::real, ARRAY[128]))), '100,91,92,93,94,95,96,97,98,99'),
 ('vecsim:hybrid_query_non_vector_score', true, 'vwf2_idx', 'o', '(%test%|other)=>[KNN 10 @v $vec_param] WITHSCORES SCORER TFIDF RETURN 2 t __v_score LIMIT 0 10', jsonb_build_object('vec_param', to_jsonb(array_fill(100::real, ARRAY[128]))), '100,91,92,93,94,95,96,97,98,99'),
 ('vecsim:hybrid_query_non_vector_score', true, 'vwf2_idx', 'o', '((text ~"value")|other)=>[KNN 10 @v $vec_param] WITHSCORES SCORER TFIDF SORTBY t RETURN 2 t __v_score LIMIT 0 10', jsonb_build_object('vec_param', to_jsonb(array_fill(100::real, ARRAY[128]))), '100,91,92,93,94,95,96,97,98,99'),
 ('vecsim:hybrid_query_non_vector_score', true, 'vwf2_idx', 'o', '(%test%|other)=>[KNN 10 @v $vec_param] WITHSCORES SCORER TFIDF SORTBY t RETURN 2 t __v_score LIMIT 0 10', jsonb_build_object('vec_param', to_jsonb(array_fill(100::real, ARRAY[128]))), '100,91,92,93,94,95,96,97,98,99'),
 ('vecsim:hybrid_query_non_vector_score', true, 'vwf2_idx', 'o', '(text|other)=>[KNN 10 @v $vec_param] SCORER TFIDF.DOCNORM WITHSCORES RETURN 2 t __v_score LIMIT 0 10', jsonb_build_object('vec_param', to_jsonb(array_fill(100::real, ARRAY[128]))), '100,91,92,93,94,95,96,97,98,99'),
 ('vecsim:hybrid_query_non_vector_score', true, 'vwf2_idx', 'o', '(text|other)=>[KNN 10 @v $vec_param] SCORER BM25 WITHSCORES RETURN 2 t __v_score LIMIT 0 10', jsonb_build_object('vec_param', to_jsonb(array_fill(100::real, ARRAY[128]))), '100,91,92,93,94,95,96,97,98,99'),
 ('vecsim:hybrid_query_non_vector_score', true, 'vwf2_idx', 'o', '(text|other)=>[KNN 10 @v $vec_param] SCORER BM25STD WITHSCORES RETURN 2 t __v_score LIMIT 0 10', jsonb_build_object('vec_param', to_jsonb(array_fill(100::real, ARRAY[128]))), '100,91,92,93,94,95,96,97,98,99'),
 ('vecsim:hybrid_query_non_vector_score', true, 'vwf2_idx', 'o', '(text|other)=>[KNN 10 @v $vec_param] SCORER DISMAX WITHSCORES RETURN 2 t __v_score LIMIT 0 10', jsonb_build_object('vec_param', to_jsonb(array_fill(100::real, ARRAY[128]))), '91,92,93,94,95,96,97,98,99,100'),
 ('vecsim:hybrid_query_non_vector_score', true, 'vwf2_idx', 'o', '(text|other)=>[KNN 10 @v $vec_param] SCORER DOCSCORE WITHSCORES RETURN 2 t __v_score LIMIT 0 10', jsonb_build_object('vec_param', to_jsonb(array_fill(100::real, ARRAY[128]))), '91,92,93,94,95,96,97,98,99,100'),
 ('vecsim:hybrid_query_adhoc_bf_mode', true, 'vwf2_idx', 'd', '(other)=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score t LIMIT 0 10', jsonb_build_object('vec_param', to_jsonb(array_fill(100::real, ARRAY[128]))), '100:0,90:12800,80:51200,70:115200,60:204800,50:320000,40:460800,30:627200,20:819200,10:1036800'),
 ('vecsim:hybrid_query_batches_mode_with_text', true, 'hbt1_idx', 'o', '(nothing)=>[KNN 10 @v $vec_param]', jsonb_build_object('vec_param', ARRAY[6000, 6000]), ''),
 ('vecsim:hybrid_query_batches_mode_with_text', true, 'hbt1_idx', 'd', '(@t:(text value))=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score t LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[6000, 6000]), '6000:0,5999:2,5998:8,5997:18,5996:32,5995:50,5994:72,5993:98,5992:128,5991:162'),
 ('vecsim:hybrid_query_batches_mode_with_text', true, 'hbt1_idx', 'd', '(text value)=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score t LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[6000, 6000]), '6000:0,5999:2,5998:8,5997:18,5996:32,5995:50,5994:72,5993:98,5992:128,5991:162'),
 ('vecsim:hybrid_query_batches_mode_with_text', true, 'hbt1_idx', 'd', '("text value")=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score t LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[6000, 6000]), '6000:0,5999:2,5998:8,5997:18,5996:32,5995:50,5994:72,5993:98,5992:128,5991:162'),
 ('vecsim:hybrid_query_batches_mode_with_text', true, 'hbt2_idx', 'd', '(other)=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score t LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[6000, 6000]), '6000:0,5995:50,5990:200,5985:450,5980:800,5975:1250,5970:1800,5965:2450,5960:3200,5955:4050'),
 ('vecsim:hybrid_query_batches_mode_with_text', true, 'hbt2_idx', 'o', '(@t:other text)=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score t LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[6000, 6000]), ''),
 ('vecsim:hybrid_query_batches_mode_with_text', true, 'hbt2_idx', 'd', '(@t:other -text)=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score t LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[6000, 6000]), '6000:0,5995:50,5990:200,5985:450,5980:800,5975:1250,5970:1800,5965:2450,5960:3200,5955:4050'),
 ('vecsim:hybrid_query_batches_mode_with_text', true, 'hbt2_idx', 'd', '(@t:other|text)=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score t LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[6000, 6000]), '6000:0,5999:2,5998:8,5997:18,5996:32,5995:50,5994:72,5993:98,5992:128,5991:162'),
 ('vecsim:hybrid_query_batches_mode_with_text', true, 'hbt2_idx', 'd', '(te*)=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score t LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[6000, 6000]), '5999:2,5998:8,5997:18,5996:32,5994:72,5993:98,5992:128,5991:162,5989:242,5988:288'),
 ('vecsim:hybrid_query_batches_mode_with_text', true, 'hbt2_idx', 'd', '(%test%)=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score t LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[6000, 6000]), '5999:2,5998:8,5997:18,5996:32,5994:72,5993:98,5992:128,5991:162,5989:242,5988:288'),
 ('vecsim:hybrid_query_batches_mode_with_text', true, 'hbt2_idx', 'd', '(-(@t:other))=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score t LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[6000, 6000]), '5999:2,5998:8,5997:18,5996:32,5994:72,5993:98,5992:128,5991:162,5989:242,5988:288'),
 ('vecsim:hybrid_query_batches_mode_with_text', true, 'hbt2_idx', 'o', '(t*)=>[KNN 10 @v $vec_param]', jsonb_build_object('vec_param', ARRAY[6000, 6000]), ''),
 ('vecsim:hybrid_query_batches_mode_with_text', true, 'hbt2_idx', 'o', '(@t:t* @t:text)=>[KNN 10 @v $vec_param]', jsonb_build_object('vec_param', ARRAY[6000, 6000]), ''),
 ('vecsim:hybrid_query_batches_mode_with_tags', false, 'hbg1_idx', 'd', '(@tags:{hybrid})=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score tags LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[3000, 3000]), '3000:0,2999:2,3001:2,2998:8,3002:8,2997:18,3003:18,2996:32,3004:32,2995:50'),
 ('vecsim:hybrid_query_batches_mode_with_tags', false, 'hbg1_idx', 'o', '(@tags:{nothing})=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score tags LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[3000, 3000]), ''),
 ('vecsim:hybrid_query_batches_mode_with_tags', true, 'hbg1_idx', 'o', '(@tags:{hybrid} @text:hello)=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score tags LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[3000, 3000]), ''),
 ('vecsim:hybrid_query_batches_mode_with_tags', false, 'hbg2_idx', 'd', '(@tags:{different})=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score tags LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[3000, 3000]), '3000:0,2995:50,3005:50,2990:200,3010:200,2985:450,3015:450,2980:800,3020:800,2975:1250'),
 ('vecsim:hybrid_query_batches_mode_with_tags', false, 'hbg2_idx', 'd', '(@tags:{hybrid})=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score tags LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[3000, 3000]), '2999:2,3001:2,2998:8,3002:8,2997:18,3003:18,2996:32,3004:32,2994:72,3006:72'),
 ('vecsim:hybrid_query_batches_mode_with_tags', false, 'hbg2_idx', 'd', '(@tags:{hy*})=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score tags LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[3000, 3000]), '2999:2,3001:2,2998:8,3002:8,2997:18,3003:18,2996:32,3004:32,2994:72,3006:72'),
 ('vecsim:hybrid_query_batches_mode_with_tags', false, 'hbg2_idx', 'o', '(@tags:{hybrid|tag})=>[KNN 10 @v $vec_param] WITHSCORES SCORER TFIDF RETURN 2 tags __v_score LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[3000, 3000]), '2995,3000,2996,2997,2998,2999,3001,3002,3003,3004'),
 ('vecsim:hybrid_query_with_numeric', false, 'hnum_idx', 'd', '(@num:[0 6000])=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score num LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[6000, 6000]), '6000:0,5999:2,5998:8,5997:18,5996:32,5995:50,5994:72,5993:98,5992:128,5991:162'),
 ('vecsim:hybrid_query_with_numeric', false, 'hnum_idx', 'd', '(@num:[0 inf])=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score num LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[6000, 6000]), '6000:0,5999:2,5998:8,5997:18,5996:32,5995:50,5994:72,5993:98,5992:128,5991:162'),
 ('vecsim:hybrid_query_with_numeric', false, 'hnum_idx', 'o', '(@num:[0 0.5])=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score num LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[6000, 6000]), ''),
 ('vecsim:hybrid_query_with_numeric', false, 'hnum_idx', 'd', '(@num:[-inf 5900])=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score num LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[6000, 6000]), '5900:20000,5899:20402,5898:20808,5897:21218,5896:21632,5895:22050,5894:22472,5893:22898,5892:23328,5891:23762'),
 ('vecsim:hybrid_query_with_numeric', false, 'hnum_idx', 'd', '(@num:[-inf 100] | @num:[5800 5900])=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score num LIMIT 0 10', jsonb_build_object('vec_param', ARRAY[6000, 6000]), '5900:20000,5899:20402,5898:20808,5897:21218,5896:21632,5895:22050,5894:22472,5893:22898,5892:23328,5891:23762'),
 ('vecsim:hybrid_query_with_numeric', false, 'hnum_idx', 'o', '(@num:[45 (50])=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 0', jsonb_build_object('vec_param', ARRAY[6000, 6000]), '49,48,47,46,45'),
 ('vecsim:hybrid_query_batches_mode_with_complex_queries', true, 'hcx_idx', 'o', '(@t2:(hybrid query) -@t1:other)=>[KNN 2 @v $vec_param] SORTBY __v_score LIMIT 0 2 RETURN 0', jsonb_build_object('vec_param', ARRAY[1, 1, 1, 1]), '1,5'),
 ('vecsim:hybrid_query_batches_mode_with_complex_queries', true, 'hcx_idx', 'o', '(@t1|t2:(value text) @num:[10 30])=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 0', jsonb_build_object('vec_param', ARRAY[1, 1, 1, 1]), '10,11,12,13,14,15,16,17,18,19'),
 ('vecsim:hybrid_query_batches_mode_with_complex_queries', true, 'hcx_idx', 'o', '(@t1|t2:(value text)=>{$inorder: true} @num:[10 30])=>[KNN 10 @v $vec_param] SORTBY __v_score WITHSCORES RETURN 2 t1 t2', jsonb_build_object('vec_param', ARRAY[1, 1, 1, 1]), ''),
 ('vecsim:hybrid_query_cosine', true, 'hcos1_idx', 's', '(text value)=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 0', jsonb_build_object('vec_param', ARRAY[1, 1, 1, 1]), '6000,5999,5998,5997,5996,5995,5994,5993,5992,5991'),
 ('vecsim:hybrid_query_cosine', true, 'hcos2_idx', 's', '(other)=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 0', jsonb_build_object('vec_param', ARRAY[1, 1, 1, 1]), '6000,5990,5980,5970,5960,5950,5940,5930,5920,5910'),
 ('vecsim:hybrid_query_with_global_filters', false, 'hgf_idx', 'o', '*=>[KNN 10 @v $vec_param] INKEYS 1 998 RETURN 1 __v_score', jsonb_build_object('vec_param', ARRAY[1000, 1000]), '998'),
 ('vecsim:hybrid_query_with_global_filters', true, 'hgf_idx', 'o', '(other)=>[KNN 10 @v $vec_param] INKEYS 3 998 990 900 RETURN 1 __v_score', jsonb_build_object('vec_param', ARRAY[1000, 1000]), '900,990'),
 ('vecsim:range_query_basic', false, 'vrq0_idx', 'o', '@v:[VECTOR_RANGE 0.1 $vec_param]=>{$YIELD_DISTANCE_AS:$score_field} SORTBY score RETURN 1 score LIMIT 0 99', jsonb_build_object('vec_param', ARRAY[1, 1, 1, 1], 'score_field', 'score'), ''),
 ('vecsim:range_query_basic', false, 'vrq_idx', 'd', '@v:[VECTOR_RANGE $r $vec_param]=>{$YIELD_DISTANCE_AS:$score_field} SORTBY score RETURN 1 score LIMIT 0 99', jsonb_build_object('vec_param', ARRAY[100, 100, 100, 100], 'r', 8464, 'score_field', 'score'), '99:4,98:16,97:36,96:64,95:100,94:144,93:196,92:256,91:324,90:400,89:484,88:576,87:676,86:784,85:900,84:1024,83:1156,82:1296,81:1444,80:1600,79:1764,78:1936,77:2116,76:2304,75:2500,74:2704,73:2916,72:3136,71:3364,70:3600,69:3844,68:4096,67:4356,66:4624,65:4900,64:5184,63:5476,62:5776,61:6084,60:6400,59:6724,58:7056,57:7396,56:7744,55:8100,54:8464'),
 ('vecsim:range_query_basic', false, 'vrq_idx', 'o', '@v:[VECTOR_RANGE $r $vec_param] RETURN 0 LIMIT 0 99', jsonb_build_object('vec_param', ARRAY[100, 100, 100, 100], 'r', 8464, 'score_field', 'score'), '54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99'),
 ('vecsim:range_query_complex_queries', true, 'vrc_idx', 'd', '@t:text @v:[VECTOR_RANGE $r $vec_param]=>{$YIELD_DISTANCE_AS:dist} SORTBY dist RETURN 3 dist t num LIMIT 0 1000', jsonb_build_object('vec_param', to_jsonb(array_fill(1000::real, ARRAY[128]))) || jsonb_build_object('r', 10368), '999:128,998:512,997:1152,996:2048,994:4608,993:6272,992:8192,991:10368'),
 ('vecsim:range_query_complex_queries', true, 'vrc_idx', 'd', 'other @v:[VECTOR_RANGE $r $vec_param]=>{$YIELD_DISTANCE_AS:dist} SORTBY dist RETURN 3 dist t num LIMIT 0 1000', jsonb_build_object('vec_param', to_jsonb(array_fill(1000::real, ARRAY[128]))) || jsonb_build_object('r', 307328), '1000:0,995:3200,990:12800,985:28800,980:51200,975:80000,970:115200,965:156800,960:204800,955:259200'),
 ('vecsim:range_query_complex_queries', true, 'vrc_idx', 'd', '(@t:other | @num:[940 (950]) @v:[VECTOR_RANGE $r $vec_param]=>{$YIELD_DISTANCE_AS:dist} SORTBY dist RETURN 3 dist t num LIMIT 0 1000', jsonb_build_object('vec_param', to_jsonb(array_fill(1000::real, ARRAY[128]))) || jsonb_build_object('r', 445568), '1000:0,995:3200,990:12800,985:28800,980:51200,975:80000,970:115200,965:156800,960:204800,955:259200,950:320000,949:332928,948:346112,947:359552,946:373248,945:387200,944:401408,943:415872,942:430592,941:445568'),
 ('vecsim:range_query_complex_queries', true, 'vrc_idx', 'd', '(-text | @num:[940 (950]) @v:[VECTOR_RANGE $r $vec_param]=>{$YIELD_DISTANCE_AS:dist} SORTBY dist RETURN 3 dist t num LIMIT 0 1000', jsonb_build_object('vec_param', to_jsonb(array_fill(1000::real, ARRAY[128]))) || jsonb_build_object('r', 445568), '1000:0,995:3200,990:12800,985:28800,980:51200,975:80000,970:115200,965:156800,960:204800,955:259200,950:320000,949:332928,948:346112,947:359552,946:373248,945:387200,944:401408,943:415872,942:430592,941:445568'),
 ('vecsim:range_query_complex_queries', true, 'vrc_idx', 'o', 'text @v:[VECTOR_RANGE $r $vec_param]=>{$yield_distance_as:dist} INKEYS 333 3 6 9 12 15 18 21 24 27 30 33 36 39 42 45 48 51 54 57 60 63 66 69 72 75 78 81 84 87 90 93 96 99 102 105 108 111 114 117 120 123 126 129 132 135 138 141 144 147 150 153 156 159 162 165 168 171 174 177 180 183 186 189 192 195 198 201 204 207 210 213 216 219 222 225 228 231 234 237 240 243 246 249 252 255 258 261 264 267 270 273 276 279 282 285 288 291 294 297 300 303 306 309 312 315 318 321 324 327 330 333 336 339 342 345 348 351 354 357 360 363 366 369 372 375 378 381 384 387 390 393 396 399 402 405 408 411 414 417 420 423 426 429 432 435 438 441 444 447 450 453 456 459 462 465 468 471 474 477 480 483 486 489 492 495 498 501 504 507 510 513 516 519 522 525 528 531 534 537 540 543 546 549 552 555 558 561 564 567 570 573 576 579 582 585 588 591 594 597 600 603 606 609 612 615 618 621 624 627 630 633 636 639 642 645 648 651 654 657 660 663 666 669 672 675 678 681 684 687 690 693 696 699 702 705 708 711 714 717 720 723 726 729 732 735 738 741 744 747 750 753 756 759 762 765 768 771 774 777 780 783 786 789 792 795 798 801 804 807 810 813 816 819 822 825 828 831 834 837 840 843 846 849 852 855 858 861 864 867 870 873 876 879 882 885 888 891 894 897 900 903 906 909 912 915 918 921 924 927 930 933 936 939 942 945 948 951 954 957 960 963 966 969 972 975 978 981 984 987 990 993 996 999 SORTBY dist NOCONTENT LIMIT 0 1000', jsonb_build_object('vec_param', to_jsonb(array_fill(1000::real, ARRAY[128]))) || jsonb_build_object('r', 1280000), '999,996,993,987,984,981,978,972,969,966,963,957,954,951,948,942,939,936,933,927,924,921,918,912,909,906,903'),
 ('vecsim:range_query_complex_queries', true, 'vrc2_idx', 'o', '(text|other|unique) @v:[VECTOR_RANGE $r $vec_param] SCORER TFIDF WITHSCORES RETURN 0 LIMIT 0 11', jsonb_build_object('vec_param', to_jsonb(array_fill(1000::real, ARRAY[128]))) || jsonb_build_object('r', 12800), '1000,990,995,991,992,993,994,996,997,998,999'),
 ('vecsim:multiple_range_queries', false, 'vmr_idx', 'o', '(@v_flat:[VECTOR_RANGE $r $vec_param_flat]=>{$YIELD_DISTANCE_AS:dist_flat} @v_hnsw:[VECTOR_RANGE $r $vec_param_hnsw]=>{$YIELD_DISTANCE_AS:dist_hnsw}) SORTBY dist_flat RETURN 2 dist_flat dist_hnsw', jsonb_build_object('vec_param_flat', array_fill(25::real, ARRAY[16]), 'vec_param_hnsw', array_fill(50::real, ARRAY[16]), 'knn_vec', array_fill(0::real, ARRAY[16]), 'r', 10000), '25,26,27,28,29,30,31,32,33,34'),
 ('vecsim:multiple_range_queries', false, 'vmr_idx', 'o', '(@v_flat:[VECTOR_RANGE $r $vec_param_flat]=>{$YIELD_DISTANCE_AS:dist_flat} @v_hnsw:[VECTOR_RANGE $r $vec_param_hnsw]=>{$YIELD_DISTANCE_AS:dist_hnsw}) SORTBY dist_hnsw RETURN 2 dist_flat dist_hnsw', jsonb_build_object('vec_param_flat', array_fill(25::real, ARRAY[16]), 'vec_param_hnsw', array_fill(50::real, ARRAY[16]), 'knn_vec', array_fill(0::real, ARRAY[16]), 'r', 10000), '50,49,48,47,46,45,44,43,42,41'),
 ('vecsim:multiple_range_queries', false, 'vmr_idx', 'o', '(@v_flat:[VECTOR_RANGE $r $vec_param_flat]=>{$YIELD_DISTANCE_AS:dist_flat} | @v_hnsw:[VECTOR_RANGE $r $vec_param_hnsw]=>{$YIELD_DISTANCE_AS:dist_hnsw}) SORTBY num LIMIT 0 100 RETURN 2 dist_flat dist_hnsw', jsonb_build_object('vec_param_flat', array_fill(25::real, ARRAY[16]), 'vec_param_hnsw', array_fill(50::real, ARRAY[16]), 'knn_vec', array_fill(0::real, ARRAY[16]), 'r', 10000), '1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75'),
 ('vecsim:multiple_range_queries', true, 'vmr_idx', 'o', '(@v_flat:[VECTOR_RANGE $r $vec_param_flat]=>{$YIELD_DISTANCE_AS:dist_flat} | @v_hnsw:[VECTOR_RANGE $r $vec_param_hnsw]=>{$YIELD_DISTANCE_AS:dist_hnsw}) @t:other SORTBY num DESC LIMIT 0 100 RETURN 2 dist_flat dist_hnsw', jsonb_build_object('vec_param_flat', array_fill(25::real, ARRAY[16]), 'vec_param_hnsw', array_fill(50::real, ARRAY[16]), 'knn_vec', array_fill(0::real, ARRAY[16]), 'r', 10000), '75,70,65,60,55,50,45,40,35,30,25,20,15,10,5'),
 ('vecsim:multiple_range_queries', false, 'vmr_idx', 'o', '(@v_flat:[VECTOR_RANGE $r $vec_param_flat]=>{$YIELD_DISTANCE_AS:dist_flat} @v_hnsw:[VECTOR_RANGE $r $vec_param_hnsw]=>{$YIELD_DISTANCE_AS:dist_hnsw})=>[KNN 10 @v_hnsw $knn_vec AS knn_dist] SORTBY knn_dist RETURN 3 dist_flat dist_hnsw knn_dist', jsonb_build_object('vec_param_flat', array_fill(25::real, ARRAY[16]), 'vec_param_hnsw', array_fill(50::real, ARRAY[16]), 'knn_vec', array_fill(0::real, ARRAY[16]), 'r', 10000), '25,26,27,28,29,30,31,32,33,34'),
 ('vecsim:multiple_range_queries', true, 'vmr_idx', 'o', '((@v_flat:[VECTOR_RANGE $r $vec_param_flat]=>{$YIELD_DISTANCE_AS:dist_flat} | @v_hnsw:[VECTOR_RANGE $r $vec_param_hnsw]=>{$YIELD_DISTANCE_AS:dist_hnsw}) @t:other)=>[KNN 20 @v_hnsw $knn_vec AS knn_dist] SORTBY knn_dist RETURN 2 dist_hnsw knn_dist LIMIT 0 20', jsonb_build_object('vec_param_flat', array_fill(25::real, ARRAY[16]), 'vec_param_hnsw', array_fill(50::real, ARRAY[16]), 'knn_vec', array_fill(0::real, ARRAY[16]), 'r', 10000), '5,10,15,20,25,30,35,40,45,50,55,60,65,70,75'),
 ('vecsim:query_with_knn_substr', true, 'vks_idx', 'd', '(@t:KNN)=>[KNN 3 @v $BLOB]=>{$yield_distance_as: dist} SORTBY dist RETURN 1 dist', '{"BLOB": [0, 0]}'::jsonb, 'doc1:2,doc3:18,doc5:50'),
 ('vecsim:query_with_knn_substr', true, 'vks_idx', 's', '(@t:KNN) NOCONTENT', NULL, 'doc1,doc3,doc5,doc7,doc9'),
 ('vecsim:score_name_case_sensitivity', false, 'vsn_idx', 'f', '*=>[KNN $k @VEC $BLOB]=>{$yield_distance_as: SCORE} RETURN 1 SCORE', '{"k": 10, "BLOB": [0, 0]}'::jsonb, 'doc0 {"SCORE": 0};doc1 {"SCORE": 2};doc2 {"SCORE": 8};doc3 {"SCORE": 18};doc4 {"SCORE": 32};doc5 {"SCORE": 50};doc6 {"SCORE": 72};doc7 {"SCORE": 98};doc8 {"SCORE": 128};doc9 {"SCORE": 162}'),
 ('vecsim:score_name_case_sensitivity', false, 'vsn_idx', 'f', '*=>[KNN $k @VEC $BLOB]=>{$yield_distance_as: SCORE} RETURN 1 score', '{"k": 10, "BLOB": [0, 0]}'::jsonb, 'doc0 {};doc1 {};doc2 {};doc3 {};doc4 {};doc5 {};doc6 {};doc7 {};doc8 {};doc9 {}'),
 ('vecsim:score_name_case_sensitivity', false, 'vsn_idx', 'f', '*=>[KNN $k @VEC $BLOB]=>{$yield_distance_as: score} RETURN 1 SCORE', '{"k": 10, "BLOB": [0, 0]}'::jsonb, 'doc0 {};doc1 {};doc2 {};doc3 {};doc4 {};doc5 {};doc6 {};doc7 {};doc8 {};doc9 {}'),
 ('vecsim:score_name_case_sensitivity', false, 'vsn_idx', 'f', '*=>[KNN 10 @VEC $BLOB AS SCORE] RETURN 1 SCORE', '{"BLOB": [0, 0]}'::jsonb, 'doc0 {"SCORE": 0};doc1 {"SCORE": 2};doc2 {"SCORE": 8};doc3 {"SCORE": 18};doc4 {"SCORE": 32};doc5 {"SCORE": 50};doc6 {"SCORE": 72};doc7 {"SCORE": 98};doc8 {"SCORE": 128};doc9 {"SCORE": 162}'),
 ('vecsim:score_name_case_sensitivity', false, 'vsn_idx', 'f', '*=>[KNN 10 @VEC $BLOB AS SCORE] RETURN 1 score', '{"BLOB": [0, 0]}'::jsonb, 'doc0 {};doc1 {};doc2 {};doc3 {};doc4 {};doc5 {};doc6 {};doc7 {};doc8 {};doc9 {}'),
 ('vecsim:score_name_case_sensitivity', false, 'vsn_idx', 'f', '*=>[KNN 10 @VEC $BLOB AS score] RETURN 1 SCORE', '{"BLOB": [0, 0]}'::jsonb, 'doc0 {};doc1 {};doc2 {};doc3 {};doc4 {};doc5 {};doc6 {};doc7 {};doc8 {};doc9 {}'),
 ('vecsim:score_name_case_sensitivity', false, 'vsn_idx', 'f', '*=>[KNN 10 @VEC $BLOB] RETURN 1 __VEC_score', '{"BLOB": [0, 0]}'::jsonb, 'doc0 {"__VEC_score": 0};doc1 {"__VEC_score": 2};doc2 {"__VEC_score": 8};doc3 {"__VEC_score": 18};doc4 {"__VEC_score": 32};doc5 {"__VEC_score": 50};doc6 {"__VEC_score": 72};doc7 {"__VEC_score": 98};doc8 {"__VEC_score": 128};doc9 {"__VEC_score": 162}'),
 ('vecsim:score_name_case_sensitivity', false, 'vsn_idx', 'f', '*=>[KNN 10 @VEC $BLOB] RETURN 1 score', '{"k": 10, "BLOB": [0, 0]}'::jsonb, 'doc0 {};doc1 {};doc2 {};doc3 {};doc4 {};doc5 {};doc6 {};doc7 {};doc8 {};doc9 {}'),
 ('vecsim:max_knn_k', false, 'vsn_idx', 'e', '*=>[KNN 576460752303423488 @VEC $BLOB AS score] RETURN 1 SCORE', '{"BLOB": [0, 0]}'::jsonb, NULL);
