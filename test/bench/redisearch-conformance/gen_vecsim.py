#!/usr/bin/env python3
# Writes vecsim.sql: cases restated from RediSearch's test_vecsim.py (the
# data each test loads, its queries, and the answers its assertions give,
# computed by the formulas the tests use).  python3 gen_vecsim.py > vecsim.sql
import math, json
out = []
cases = []
def sql(s): out.append(s)
def case(src, idx, kind, q, p, expect, text=False):
    cases.append((src, text, idx, kind, q, p, expect))
def lit(s):
    return "NULL" if s is None else "'" + s.replace("'", "''") + "'"
def fmt(x):
    return repr(float(x)) if x != int(x) else str(int(x))
def dl(pairs):
    return ",".join(f"{k}:{fmt(d)}" for k, d in pairs)
def ids(l): return ",".join(str(x) for x in l)
def jp(**kw): return lit(json.dumps(kw))
def cosd(a, b):
    dot = sum(x*y for x, y in zip(a, b)); na = math.sqrt(sum(x*x for x in a)); nb = math.sqrt(sum(x*x for x in b))
    return 1 - dot/(na*nb)
def sq(a, b): return sum((x-y)**2 for x, y in zip(a, b))
def arr(dim, val): return f"jsonb_build_object('vec_param', to_jsonb(array_fill({val}::real, ARRAY[{dim}])))"

# ---- test_sanity_cosine / test_sanity_l2
data = {'a': [0.1, 0.1], 'b': [0.1, 0.2], 'c': [0.1, 0.3], 'd': [0.1, 0.4]}
sql("-- test_vecsim.py::test_sanity_cosine, test_sanity_l2: a..d = [0.1, 0.1 .. 0.4];\n-- the *_del tables after DEL b")
for name, metric in (('vcos', 'cosine'), ('vl2', 'l2')):
    for suffix, keys in (('', 'abcd'), ('_del', 'acd')):
        t = name + suffix
        rows = ", ".join(f"('{k}', '{{{data[k][0]}, {data[k][1]}}}')" for k in keys)
        sql(f"CREATE TABLE rs.{t} (k text, v real[]);\nINSERT INTO rs.{t} VALUES {rows};\n"
            f"SELECT ft.create('{t}_idx', 'rs.{t}', 'k', 'v', metric => '{metric}') IS NOT NULL;")
for qv in ([0.1, 0.1], [0.1, 0.2]):
    exp = sorted(((k, cosd(data[k], qv)) for k in 'abcd'), key=lambda x: x[1])
    p = jp(blob=qv)
    case('vecsim:sanity_cosine', 'vcos_idx', 'd', '*=>[KNN 4 @v $blob AS dist] SORTBY dist RETURN 1 dist', p, dl(exp))
    case('vecsim:sanity_cosine', 'vcos_idx', 'd', '*=>[KNN 4 @v $blob]=>{$yield_distance_as:dist} SORTBY dist RETURN 1 dist', p, dl(exp))
    r = max(d for _, d in exp) + 1e-6
    case('vecsim:sanity_cosine', 'vcos_idx', 'd', f'@v:[VECTOR_RANGE {r!r} $blob]=>{{$yield_distance_as:dist}} SORTBY dist RETURN 1 dist', p, dl(exp))
qv = [0.1, 0.2]
exp = sorted(((k, cosd(data[k], qv)) for k in 'acd'), key=lambda x: x[1])
case('vecsim:sanity_cosine', 'vcos_del_idx', 'd', '*=>[KNN 4 @v $blob AS dist] SORTBY dist RETURN 1 dist', jp(blob=qv), dl(exp))
r = cosd(data['a'], qv) + 1e-6
case('vecsim:sanity_cosine', 'vcos_del_idx', 'd', f'@v:[VECTOR_RANGE {r!r} $blob]=>{{$yield_distance_as: dist}} SORTBY dist RETURN 1 dist', jp(blob=qv), dl(exp))
for qv, syn in (([0.1, 0.1], ']=>{$yield_distance_as: dist}'), ([0.1, 0.19], ' AS dist]')):
    exp = sorted(((k, sq(data[k], qv)) for k in 'abcd'), key=lambda x: x[1])
    case('vecsim:sanity_l2', 'vl2_idx', 'd', f'*=>[KNN 4 @v $blob{syn} SORTBY dist RETURN 1 dist', jp(blob=qv), dl(exp))
    r = sq(data['d'], qv) + 1e-6
    case('vecsim:sanity_l2', 'vl2_idx', 'd', f'@v:[VECTOR_RANGE {r!r} $blob]=>{{$yield_distance_as: dist}} SORTBY dist RETURN 1 dist', jp(blob=qv), dl(exp))
exp = sorted(((k, sq(data[k], qv)) for k in 'acd'), key=lambda x: x[1])
case('vecsim:sanity_l2', 'vl2_del_idx', 'd', '*=>[KNN 4 @v $blob AS dist] SORTBY dist RETURN 1 dist', jp(blob=qv), dl(exp))
r = sq(data['d'], qv) + 1e-6
case('vecsim:sanity_l2', 'vl2_del_idx', 'd', f'@v:[VECTOR_RANGE {r!r} $blob]=>{{$yield_distance_as: dist}} SORTBY dist RETURN 1 dist', jp(blob=qv), dl(exp))

# ---- test_sanity_zero_results (n = 0xa..0xd, the test's random vectors fixed)
sql("-- test_vecsim.py::test_sanity_zero_results (n NUMERIC; the test's random vectors fixed)")
sql("CREATE TABLE rs.vzero (k text, n int, v real[]);\nINSERT INTO rs.vzero VALUES ('a', 10, '{0.1,0.7,0.3,0.9}'), ('b', 11, '{0.5,0.2,0.8,0.4}'),\n ('c', 12, '{0.9,0.1,0.6,0.2}'), ('d', 13, '{0.3,0.3,0.3,0.3}');\n"
    "SELECT ft.create('vzero_idx', 'rs.vzero', 'k', 'v') IS NOT NULL;")
zp = jp(blob=[0.4, 0.6, 0.2, 0.5]); zk = jp(blob=[0.4, 0.6, 0.2, 0.5], K=0)
for f in ('*', '@n:[0 10]'):
    case('vecsim:sanity_zero_results', 'vzero_idx', 'o', f'{f}=>[KNN 0 @v $blob AS dist]', zp, '')
    case('vecsim:sanity_zero_results', 'vzero_idx', 'o', f'{f}=>[KNN $K @v $blob AS dist]', zk, '')
    case('vecsim:sanity_zero_results', 'vzero_idx', 'o', f'{f}=>[KNN 0 @v $blob AS dist] SORTBY dist RETURN 1 dist LIMIT 0 10', zp, '')

# ---- test_search_ints, test_del_reuse: KNN without SORTBY is in doc order
sql("-- test_vecsim.py::test_search_ints (a..d = [40]*4 .. [10]*4); test_del_reuse\n-- (4 arbitrary vectors; the test draws them at random)")
sql("CREATE TABLE rs.vints (k text, v real[]);\nINSERT INTO rs.vints VALUES ('a', '{40,40,40,40}'), ('b', '{30,30,30,30}'), ('c', '{20,20,20,20}'), ('d', '{10,10,10,10}');\n"
    "SELECT ft.create('vints_idx', 'rs.vints', 'k', 'v') IS NOT NULL;")
ip = jp(blob=[0, 0, 0, 0])
case('vecsim:search_ints', 'vints_idx', 'd', '*=>[KNN 4 @v $blob AS score] RETURN 1 score', ip, 'a:6400,b:3600,c:1600,d:400')
case('vecsim:search_ints', 'vints_idx', 'd', '*=>[KNN 4 @v $blob AS score] SORTBY score RETURN 1 score', ip, 'd:400,c:1600,b:3600,a:6400')
sql("CREATE TABLE rs.vdel (k text, v real[]);\nINSERT INTO rs.vdel VALUES ('a', '{0.9,0.2}'), ('b', '{0.1,0.8}'), ('c', '{0.5,0.5}'), ('d', '{0.3,0.1}');\n"
    "SELECT ft.create('vdel_idx', 'rs.vdel', 'k', 'v') IS NOT NULL;")
case('vecsim:del_reuse', 'vdel_idx', 'o', '*=>[KNN 4 @v $b] RETURN 1 v', jp(b=[0.2, 0.3]), 'a,b,c,d')

# ---- test_search_errors (s TEXT, t TAG, v VECTOR dim 2)
sql("-- test_vecsim.py::test_search_errors (s TEXT, t TAG, v: [i, i])")
sql("CREATE TABLE rs.verr (k int, s text, t text, v real[]);\nINSERT INTO rs.verr SELECT i, 'hello', NULL, ARRAY[i, i] FROM generate_series(0, 3) i;\n"
    "SELECT ft.create('verr_idx', 'rs.verr', 'k', 'v', text_fields => '{s}') IS NOT NULL;")
b = jp(b=[1, 2])
errs = [
 ('*=>[REDIS 4 @v $b]', b), ('*=>[KNN str @v $b]', b), ('*=>[K 4 @v $b]', b),
 ('*=>[KNN 2 @v $b]', jp(b='YWJjZGVmZw==')), ('*=>[KNN 2 @v $b]', jp(b='YWJjZGVmZ2hp')),
 ('*=>[KNN 2 @t $b]', b), ('*=>[KNN 2 @v $b AS v]', b), ('*=>[KNN 2 @v $b AS s]', b), ('*=>[KNN 2 @v $b AS t]', b),
 ('*=>[KNN 2 @v $b AS $score]', jp(b=[1, 2], score='t')), ('*=>[KNN 2 @v $b]=>{$yield_distance_as:v;}', b),
 ('*=>[KNN 2 @v $b EF_RUNTIME -42]', b), ('*=>[KNN 2 @v $b EF_RUNTIME 2.71828]', b),
 ('*=>[KNN 2 @v $b EF_RUNTIME 5 EF_RUNTIME 6]', b), ('*=>[KNN 2 @v $b EF_FUNTIME 30]', b),
 ('*=>[KNN 2 @v $b]=>{$EF_RUNTIME: 5; $EF_RUNTIME: 6;}', b),
 ('*=>[KNN 2 @v $b RERANK TRUE]', b), ('*=>[KNN 2 @v $b]=>{$RERANK: TRUE;}', b),
 ('*=>[KNN 2 @v $b BATCH_SIZE 100]', b), ('*=>[KNN 2 @v $b HYBRID_POLICY ADHOC_BF]', b),
 ('*=>[KNN 2 @v $b HYBRID_POLICY BATCHES]', b), ('*=>[KNN 2 @v $b HYBRID_POLICY BATCHES BATCH_SIZE 100]', b),
 ('@s:hello=>[KNN 2 @v $b BATCH_SIZE 0]', b), ('@s:hello=>[KNN 2 @v $b BATCH_SIZE -6]', b),
 ('@s:hello=>[KNN 2 @v $b BATCH_SIZE 34_not_a_number]', b), ('@s:hello=>[KNN 2 @v $b BATCH_SIZE 8 BATCH_SIZE 0]', b),
 ('@s:hello=>[KNN 2 @v $b HYBRID_POLICY bad_policy]', b), ('@s:hello=>[KNN 2 @v $b]=>{$HYBRID_POLICY: bad_policy;}', b),
 ('@s:hello=>[KNN 2 @v $b HYBRID_POLICY ADHOC_BF BATCH_SIZE 100]', b), ('@s:hello=>[KNN 2 @v $b HYBRID_POLICY ADHOC_BF EF_RUNTIME 100]', b),
 ('*=>[KNN 2 @v $b AS score]=>{$yield_distance_as:score2;}', b), ('*=>[KNN 2 @v $b EF_RUNTIME 100]=>{$EF_RUNTIME:200;}', b),
 ('*=>[KNN 2 @v $b AS $score_1]=>{$yield_distance_as:$score_2;}', jp(b=[1, 2], score_1='score_1_val', score_2='score_2_val')),
 ('hello=>[KNN 2 @v $b AS score]=>{$yield_distance_as:__v_score;}', b), ('hello=>[KNN 2 @v $b AS score]=>{$yield_distance_as:score;}', b),
 ('*=>[KNN 2 @v $b]=>{$shard_k_ratio: invalid;}', b), ('*=>[KNN 2 @v $b]=>{$bogus_vec_param: 42;}', b),
 ('@v:[vector_range 0.1 $b]', jp(b='YWJjZGVmZw==')), ('@v:[vector_range 0.1 $b]', jp(b='YWJjZGVmZ2hp')),
 ('@bad:[vector_range 0.1 $b]', b), ('@v:[vector 0.1 $b]', b), ('@v:[vector_range -1 $b]', b),
 ('@v:[vector_range 0.1 $b]=>{$yield_distance_as:t}', b),
 ('@v:[vector_range 0.1 $b]=>{$yield_distance_as:dist} @v:[vector_range 0.2 $b]=>{$yield_distance_as:dist}', b),
 ('@v:[vector_range 0.1 $b]=>{$yield_distance_as:$dist}', jp(b=[1, 2], dist='t')),
 ('@v:[vector_range 0.1 $b]=>{$EF_RUNTIME:10}', b), ('@v:[vector_range 0.1 $b]=>{$HYBRID_POLICY:BATCHES}', b),
 ('@v:[vector_range 0.1 $b]=>{$EPSILON: -1}', b), ('@v:[vector_range 0.1 $b]=>{$EPSILON: 0}', b),
 ('@v:[vector_range 0.1 $b]=>{$EPSILON: not_a_num}', b), ('@v:[vector_range 0.1 $b]=>{$EPSILON: 0.1; $EPSILON: 0.2}', b),
 ('@v:[vector_range 0.1 $b]=>{$EPSILON: 0.1; $EF_RUNTIME: 20}', b),
 ('*=>[KNN 2 @v $b EPSILON 2.71828]', b), ('*=>[KNN 2 @v $b]=>{$EPSILON: 2.71828}', b), ('@s:hello=>[KNN 2 @v $b]=>{$EPSILON: 0.1}', b),
 ('*=>[KNN 576460752303423488 @v $b AS score]', b),
 ('*=>[KNN 10 @v $BLOB] DIALECT 1', jp(BLOB=[1, 1])), ('@v:[VECTOR_RANGE 10 $BLOB] DIALECT 1', jp(BLOB=[1, 1])),
]
for q, p in errs:
    case('vecsim:search_errors', 'verr_idx', 'e', q, p, None)

# ---- test_with_fields (128 dims, [i]*128 for i in 1..100, t TEXT)
sql("-- test_vecsim.py::test_with_fields, test_hybrid_query_non_vector_score,\n-- test_hybrid_query_adhoc_bf_mode: 128 dims, doc i = [i]*128, t 'text value';\n-- vwf2: docs 10, 20, .., 100 have t 'other'")
sql("CREATE TABLE rs.vwf (k int, t text, v real[]);\nINSERT INTO rs.vwf SELECT i, 'text value', array_fill(i::real, ARRAY[128]) FROM generate_series(1, 100) i;\n"
    "SELECT ft.create('vwf_idx', 'rs.vwf', 'k', 'v', text_fields => '{t}') IS NOT NULL;")
sql("CREATE TABLE rs.vwf2 (k int, t text, v real[]);\nINSERT INTO rs.vwf2 SELECT i, CASE WHEN i % 10 = 0 THEN 'other' ELSE 'text value' END, array_fill(i::real, ARRAY[128]) FROM generate_series(1, 100) i;\n"
    "SELECT ft.create('vwf2_idx', 'rs.vwf2', 'k', 'v', text_fields => '{t}') IS NOT NULL;")
p05 = arr(128, 0.5)
first10 = ids(range(1, 11))
case('vecsim:with_fields', 'vwf_idx', 'o', '*=>[KNN 100 @v $vec_param AS score] SORTBY score RETURN 2 score t', p05, first10)
case('vecsim:with_fields', 'vwf_idx', 'o', '*=>[KNN 100 @v $vec_param AS score] SORTBY score NOCONTENT', p05, first10)
case('vecsim:with_fields', 'vwf_idx', 'o', '@v:[VECTOR_RANGE $r $vec_param]=>{$YIELD_DISTANCE_AS:score} SORTBY score RETURN 2 score t',
     f"{arr(128, 0.5)} || jsonb_build_object('r', 1280000)", first10)
case('vecsim:with_fields', 'vwf_idx', 'e', '*=>[KNN 100 @not_a_field $vec_param]', p05, None)
case('vecsim:with_fields', 'vwf_idx', 'e', '*=>[KNN 100 @not_a_field $vec_param AS score] SORTBY score', p05, None)
case('vecsim:with_fields', 'vwf_idx', 'e', '@not_a_field:(vectors are cool)', None, None)
p100 = arr(128, 100)
top = [100] + list(range(91, 100))
for sc in ('', ' SORTBY t'):
    case('vecsim:hybrid_query_non_vector_score', 'vwf2_idx', 'o', f'((text ~"value")|other)=>[KNN 10 @v $vec_param] WITHSCORES SCORER TFIDF{sc} RETURN 2 t __v_score LIMIT 0 10', p100, ids(top), True)
    case('vecsim:hybrid_query_non_vector_score', 'vwf2_idx', 'o', f'(%test%|other)=>[KNN 10 @v $vec_param] WITHSCORES SCORER TFIDF{sc} RETURN 2 t __v_score LIMIT 0 10', p100, ids(top), True)
for scorer in ('TFIDF.DOCNORM', 'BM25', 'BM25STD'):
    case('vecsim:hybrid_query_non_vector_score', 'vwf2_idx', 'o', f'(text|other)=>[KNN 10 @v $vec_param] SCORER {scorer} WITHSCORES RETURN 2 t __v_score LIMIT 0 10', p100, ids(top), True)
for scorer in ('DISMAX', 'DOCSCORE'):
    case('vecsim:hybrid_query_non_vector_score', 'vwf2_idx', 'o', f'(text|other)=>[KNN 10 @v $vec_param] SCORER {scorer} WITHSCORES RETURN 2 t __v_score LIMIT 0 10', p100, ids(list(range(91, 101))), True)
case('vecsim:hybrid_query_adhoc_bf_mode', 'vwf2_idx', 'd', '(other)=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 2 __v_score t LIMIT 0 10', p100,
     dl((10*i, 128*(100-10*i)**2) for i in range(10, 0, -1)), True)

# ---- test_hybrid_query_batches_mode_with_text (6000 docs [i, i], t TEXT)
sql("-- test_vecsim.py::test_hybrid_query_batches_mode_with_text: doc i = [i, i],\n-- t 'text value'; hbt2: docs 5, 10, .., 6000 have t 'other'")
sql("CREATE TABLE rs.hbt1 (k int, t text, v real[]);\nINSERT INTO rs.hbt1 SELECT i, 'text value', ARRAY[i, i] FROM generate_series(1, 6000) i;\n"
    "SELECT ft.create('hbt1_idx', 'rs.hbt1', 'k', 'v', text_fields => '{t}') IS NOT NULL;")
sql("CREATE TABLE rs.hbt2 (k int, t text, v real[]);\nINSERT INTO rs.hbt2 SELECT i, CASE WHEN i % 5 = 0 THEN 'other' ELSE 'text value' END, ARRAY[i, i] FROM generate_series(1, 6000) i;\n"
    "SELECT ft.create('hbt2_idx', 'rs.hbt2', 'k', 'v', text_fields => '{t}') IS NOT NULL;")
pv = "jsonb_build_object('vec_param', ARRAY[6000, 6000])"
S = ' SORTBY __v_score RETURN 2 __v_score t LIMIT 0 10'
case('vecsim:hybrid_query_batches_mode_with_text', 'hbt1_idx', 'o', '(nothing)=>[KNN 10 @v $vec_param]', pv, '', True)
e1 = dl((6000-i, 2*i*i) for i in range(10))
for f in ('(@t:(text value))', '(text value)', '("text value")'):
    case('vecsim:hybrid_query_batches_mode_with_text', 'hbt1_idx', 'd', f'{f}=>[KNN 10 @v $vec_param]' + S, pv, e1, True)
e2 = dl((6000-5*i, 2*(5*i)**2) for i in range(10))
case('vecsim:hybrid_query_batches_mode_with_text', 'hbt2_idx', 'd', '(other)=>[KNN 10 @v $vec_param]' + S, pv, e2, True)
case('vecsim:hybrid_query_batches_mode_with_text', 'hbt2_idx', 'o', '(@t:other text)=>[KNN 10 @v $vec_param]' + S, pv, '', True)
case('vecsim:hybrid_query_batches_mode_with_text', 'hbt2_idx', 'd', '(@t:other -text)=>[KNN 10 @v $vec_param]' + S, pv, e2, True)
case('vecsim:hybrid_query_batches_mode_with_text', 'hbt2_idx', 'd', '(@t:other|text)=>[KNN 10 @v $vec_param]' + S, pv, e1, True)
nd = [i for i in range(13) if (6000-i) % 5][:10]
e3 = dl((6000-i, 2*i*i) for i in nd)
for f in ('(te*)', '(%test%)', '(-(@t:other))'):
    case('vecsim:hybrid_query_batches_mode_with_text', 'hbt2_idx', 'd', f'{f}=>[KNN 10 @v $vec_param]' + S, pv, e3, True)
case('vecsim:hybrid_query_batches_mode_with_text', 'hbt2_idx', 'o', '(t*)=>[KNN 10 @v $vec_param]', pv, '', True)
case('vecsim:hybrid_query_batches_mode_with_text', 'hbt2_idx', 'o', '(@t:t* @t:text)=>[KNN 10 @v $vec_param]', pv, '', True)

# ---- test_hybrid_query_batches_mode_with_tags (tags TAG, text TEXT)
sql("-- test_vecsim.py::test_hybrid_query_batches_mode_with_tags: doc i = [i, i],\n-- tags 'hybrid', text 'text'; hbg2: docs 5, 10, .. have tags 'different, tag'")
sql("CREATE TABLE rs.hbg1 (k int, tags text[], text text, v real[]);\nINSERT INTO rs.hbg1 SELECT i, '{hybrid}', 'text', ARRAY[i, i] FROM generate_series(1, 6000) i;\n"
    "SELECT ft.create('hbg1_idx', 'rs.hbg1', 'k', 'v', text_fields => '{text}') IS NOT NULL;")
sql("CREATE TABLE rs.hbg2 (k int, tags text[], text text, v real[]);\nINSERT INTO rs.hbg2 SELECT i, CASE WHEN i % 5 = 0 THEN '{different,tag}'::text[] ELSE '{hybrid}' END, 'text', ARRAY[i, i] FROM generate_series(1, 6000) i;\n"
    "SELECT ft.create('hbg2_idx', 'rs.hbg2', 'k', 'v', text_fields => '{text}') IS NOT NULL;")
pg = "jsonb_build_object('vec_param', ARRAY[3000, 3000])"
S = ' SORTBY __v_score RETURN 2 __v_score tags LIMIT 0 10'
def near(cond, n=10):
    c = sorted((k for k in range(1, 6001) if cond(k)), key=lambda k: (2*(k-3000)**2, k))[:n]
    return dl((k, 2*(k-3000)**2) for k in c)
case('vecsim:hybrid_query_batches_mode_with_tags', 'hbg1_idx', 'd', '(@tags:{hybrid})=>[KNN 10 @v $vec_param]' + S, pg, near(lambda k: True))
case('vecsim:hybrid_query_batches_mode_with_tags', 'hbg1_idx', 'o', '(@tags:{nothing})=>[KNN 10 @v $vec_param]' + S, pg, '')
case('vecsim:hybrid_query_batches_mode_with_tags', 'hbg1_idx', 'o', '(@tags:{hybrid} @text:hello)=>[KNN 10 @v $vec_param]' + S, pg, '', True)
case('vecsim:hybrid_query_batches_mode_with_tags', 'hbg2_idx', 'd', '(@tags:{different})=>[KNN 10 @v $vec_param]' + S, pg, near(lambda k: k % 5 == 0))
case('vecsim:hybrid_query_batches_mode_with_tags', 'hbg2_idx', 'd', '(@tags:{hybrid})=>[KNN 10 @v $vec_param]' + S, pg, near(lambda k: k % 5 != 0))
case('vecsim:hybrid_query_batches_mode_with_tags', 'hbg2_idx', 'd', '(@tags:{hy*})=>[KNN 10 @v $vec_param]' + S, pg, near(lambda k: k % 5 != 0))
case('vecsim:hybrid_query_batches_mode_with_tags', 'hbg2_idx', 'o', '(@tags:{hybrid|tag})=>[KNN 10 @v $vec_param] WITHSCORES SCORER TFIDF RETURN 2 tags __v_score LIMIT 0 10', pg,
     ids([2995, 3000, 2996, 2997, 2998, 2999, 3001, 3002, 3003, 3004]))

# ---- test_hybrid_query_with_numeric
sql("-- test_vecsim.py::test_hybrid_query_with_numeric: doc i = [i, i], num i")
sql("CREATE TABLE rs.hnum (k int, num int, v real[]);\nINSERT INTO rs.hnum SELECT i, i, ARRAY[i, i] FROM generate_series(1, 6000) i;\n"
    "SELECT ft.create('hnum_idx', 'rs.hnum', 'k', 'v') IS NOT NULL;")
S = ' SORTBY __v_score RETURN 2 __v_score num LIMIT 0 10'
case('vecsim:hybrid_query_with_numeric', 'hnum_idx', 'd', '(@num:[0 6000])=>[KNN 10 @v $vec_param]' + S, pv, e1)
case('vecsim:hybrid_query_with_numeric', 'hnum_idx', 'd', '(@num:[0 inf])=>[KNN 10 @v $vec_param]' + S, pv, e1)
case('vecsim:hybrid_query_with_numeric', 'hnum_idx', 'o', '(@num:[0 0.5])=>[KNN 10 @v $vec_param]' + S, pv, '')
e4 = dl((5900-i, 2*(100+i)**2) for i in range(10))
case('vecsim:hybrid_query_with_numeric', 'hnum_idx', 'd', '(@num:[-inf 5900])=>[KNN 10 @v $vec_param]' + S, pv, e4)
case('vecsim:hybrid_query_with_numeric', 'hnum_idx', 'd', '(@num:[-inf 100] | @num:[5800 5900])=>[KNN 10 @v $vec_param]' + S, pv, e4)
case('vecsim:hybrid_query_with_numeric', 'hnum_idx', 'o', '(@num:[45 (50])=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 0', pv, ids(range(49, 44, -1)))

# ---- test_hybrid_query_batches_mode_with_complex_queries (dim 4)
sql("-- test_vecsim.py::test_hybrid_query_batches_mode_with_complex_queries (dim 4, num, t1, t2)")
sql("CREATE TABLE rs.hcx (k int, num int, t1 text, t2 text, v real[]);\nINSERT INTO rs.hcx VALUES (1, 1, 'text value', 'hybrid query', '{1,1,1,1}'),\n"
    " (2, 2, 'text value', 'hybrid query', '{10,10,10,10}'), (3, 3, 'other', 'hybrid query', '{10,10,10,10}'),\n (4, 4, 'other', 'hybrid query', '{1,1,1,1}');\n"
    "INSERT INTO rs.hcx SELECT i, i, 'text value', 'hybrid query', array_fill(i::real, ARRAY[4]) FROM generate_series(5, 6000) i;\n"
    "SELECT ft.create('hcx_idx', 'rs.hcx', 'k', 'v', text_fields => '{t1, t2}') IS NOT NULL;")
pc = "jsonb_build_object('vec_param', ARRAY[1, 1, 1, 1])"
case('vecsim:hybrid_query_batches_mode_with_complex_queries', 'hcx_idx', 'o', '(@t2:(hybrid query) -@t1:other)=>[KNN 2 @v $vec_param] SORTBY __v_score LIMIT 0 2 RETURN 0', pc, '1,5', True)
case('vecsim:hybrid_query_batches_mode_with_complex_queries', 'hcx_idx', 'o', '(@t1|t2:(value text) @num:[10 30])=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 0', pc, ids(range(10, 20)), True)
case('vecsim:hybrid_query_batches_mode_with_complex_queries', 'hcx_idx', 'o', '(@t1|t2:(value text)=>{$inorder: true} @num:[10 30])=>[KNN 10 @v $vec_param] SORTBY __v_score WITHSCORES RETURN 2 t1 t2', pc, '', True)

# ---- test_hybrid_query_cosine (dim 4, [i/6000, 1, 1, 1])
sql("-- test_vecsim.py::test_hybrid_query_cosine: doc i = [i/6000, 1, 1, 1], t 'text value';\n-- hcos2: docs 10, 20, .. have t 'other'")
for t, other in (('hcos1', False), ('hcos2', True)):
    tv = "CASE WHEN i % 10 = 0 THEN 'other' ELSE 'text value' END" if other else "'text value'"
    sql(f"CREATE TABLE rs.{t} (k int, t text, v real[]);\nINSERT INTO rs.{t} SELECT i, {tv}, ARRAY[i / 6000.0, 1, 1, 1] FROM generate_series(1, 6000) i;\n"
        f"SELECT ft.create('{t}_idx', 'rs.{t}', 'k', 'v', metric => 'cosine', text_fields => '{{t}}') IS NOT NULL;")
pc = "jsonb_build_object('vec_param', ARRAY[1, 1, 1, 1])"
case('vecsim:hybrid_query_cosine', 'hcos1_idx', 's', '(text value)=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 0', pc, ids(range(6000, 5990, -1)), True)
case('vecsim:hybrid_query_cosine', 'hcos2_idx', 's', '(other)=>[KNN 10 @v $vec_param] SORTBY __v_score RETURN 0', pc, ids(range(6000, 5900, -10)), True)

# ---- test_hybrid_query_with_global_filters: INKEYS
sql("-- test_vecsim.py::test_hybrid_query_with_global_filters: doc i = [i, i], t 'hybrid',\n-- docs 5, 10, .. t 'other' (the second phase)")
sql("CREATE TABLE rs.hgf (k int, t text, num int, v real[]);\nINSERT INTO rs.hgf SELECT i, CASE WHEN i % 5 = 0 THEN 'other' ELSE 'hybrid' END, i, ARRAY[i, i] FROM generate_series(1, 1000) i;\n"
    "SELECT ft.create('hgf_idx', 'rs.hgf', 'k', 'v', text_fields => '{t}') IS NOT NULL;")
pq = "jsonb_build_object('vec_param', ARRAY[1000, 1000])"
case('vecsim:hybrid_query_with_global_filters', 'hgf_idx', 'o', '*=>[KNN 10 @v $vec_param] INKEYS 1 998 RETURN 1 __v_score', pq, '998')
case('vecsim:hybrid_query_with_global_filters', 'hgf_idx', 'o', '(other)=>[KNN 10 @v $vec_param] INKEYS 3 998 990 900 RETURN 1 __v_score', pq, '900,990', True)

# ---- test_range_query_basic (dim 4, doc i = [i]*4, i in 1..99)
sql("-- test_vecsim.py::test_range_query_basic: dim 4, doc i = [i]*4 for i in 1..99 (vrq0: empty)")
sql("CREATE TABLE rs.vrq0 (k int, t text, v real[]);\nSELECT ft.create('vrq0_idx', 'rs.vrq0', 'k', 'v', dimensions => 4) IS NOT NULL;")
sql("CREATE TABLE rs.vrq (k int, t text, v real[]);\nINSERT INTO rs.vrq SELECT i, 'text value', array_fill(i::real, ARRAY[4]) FROM generate_series(1, 99) i;\n"
    "SELECT ft.create('vrq_idx', 'rs.vrq', 'k', 'v', text_fields => '{t}') IS NOT NULL;")
case('vecsim:range_query_basic', 'vrq0_idx', 'o', '@v:[VECTOR_RANGE 0.1 $vec_param]=>{$YIELD_DISTANCE_AS:$score_field} SORTBY score RETURN 1 score LIMIT 0 99',
     "jsonb_build_object('vec_param', ARRAY[1, 1, 1, 1], 'score_field', 'score')", '')
prq = "jsonb_build_object('vec_param', ARRAY[100, 100, 100, 100], 'r', 8464, 'score_field', 'score')"
case('vecsim:range_query_basic', 'vrq_idx', 'd', '@v:[VECTOR_RANGE $r $vec_param]=>{$YIELD_DISTANCE_AS:$score_field} SORTBY score RETURN 1 score LIMIT 0 99', prq,
     dl((99-i, 4*(i+1)**2) for i in range(46)))
case('vecsim:range_query_basic', 'vrq_idx', 'o', '@v:[VECTOR_RANGE $r $vec_param] RETURN 0 LIMIT 0 99', prq, ids(range(54, 100)))

# ---- test_range_query_complex_queries (dim 128, 1000 docs)
sql("-- test_vecsim.py::test_range_query_complex_queries: dim 128, doc i = [i]*128, t 'text', num i;\n-- docs 5, 10, .. t 'other', num -i (vrc2: then doc 1000 t 'unique')")
for t, uniq in (('vrc', False), ('vrc2', True)):
    tv = "CASE WHEN i = 1000 THEN 'unique' WHEN i % 5 = 0 THEN 'other' ELSE 'text' END" if uniq else "CASE WHEN i % 5 = 0 THEN 'other' ELSE 'text' END"
    sql(f"CREATE TABLE rs.{t} (k int, t text, num int, v real[]);\nINSERT INTO rs.{t} SELECT i, {tv}, CASE WHEN i % 5 = 0 THEN -i ELSE i END, array_fill(i::real, ARRAY[128]) FROM generate_series(1, 1000) i;\n"
        f"SELECT ft.create('{t}_idx', 'rs.{t}', 'k', 'v', text_fields => '{{t}}') IS NOT NULL;")
def prc(r): return f"{arr(128, 1000)} || jsonb_build_object('r', {r})"
S = '=>{$YIELD_DISTANCE_AS:dist} SORTBY dist RETURN 3 dist t num LIMIT 0 1000'
case('vecsim:range_query_complex_queries', 'vrc_idx', 'd', '@t:text @v:[VECTOR_RANGE $r $vec_param]' + S, prc(128*81),
     dl((1000-i, 128*i*i) for i in range(1, 10) if i != 5), True)
case('vecsim:range_query_complex_queries', 'vrc_idx', 'd', 'other @v:[VECTOR_RANGE $r $vec_param]' + S, prc(128*49**2),
     dl((1000-i, 128*i*i) for i in range(0, 50, 5)), True)
e5 = dl([(1000-i, 128*i*i) for i in range(0, 50, 5)] + [(1000-i, 128*i*i) for i in range(50, 60)])
case('vecsim:range_query_complex_queries', 'vrc_idx', 'd', '(@t:other | @num:[940 (950]) @v:[VECTOR_RANGE $r $vec_param]' + S, prc(128*59**2), e5, True)
case('vecsim:range_query_complex_queries', 'vrc_idx', 'd', '(-text | @num:[940 (950]) @v:[VECTOR_RANGE $r $vec_param]' + S, prc(128*59**2), e5, True)
inkeys = [i for i in range(3, 1001, 3)]
exp = [i for i in range(1000, 900, -1) if i in inkeys and i % 5 != 0]
case('vecsim:range_query_complex_queries', 'vrc_idx', 'o', f'text @v:[VECTOR_RANGE $r $vec_param]=>{{$yield_distance_as:dist}} INKEYS {len(inkeys)} {" ".join(map(str, inkeys))} SORTBY dist NOCONTENT LIMIT 0 1000', prc(128*100**2), ids(exp), True)
case('vecsim:range_query_complex_queries', 'vrc2_idx', 'o', '(text|other|unique) @v:[VECTOR_RANGE $r $vec_param] SCORER TFIDF WITHSCORES RETURN 0 LIMIT 0 11', prc(128*100),
     ids([1000, 990, 995, 991, 992, 993, 994, 996, 997, 998, 999]), True)

# ---- test_multiple_range_queries: two vector fields in one index
sql("-- test_vecsim.py::test_multiple_range_queries: dim 16, v_flat and v_hnsw both [i]*16,\n-- t 'text' ('other' for i % 5 = 0), num i; the segvec index is on v_hnsw")
sql("CREATE TABLE rs.vmr (k int, t text, num int, v_flat real[], v_hnsw real[]);\nINSERT INTO rs.vmr SELECT i, CASE WHEN i % 5 = 0 THEN 'other' ELSE 'text' END, i, array_fill(i::real, ARRAY[16]), array_fill(i::real, ARRAY[16]) FROM generate_series(1, 100) i;\n"
    "SELECT ft.create('vmr_idx', 'rs.vmr', 'k', 'v_hnsw', text_fields => '{t}') IS NOT NULL;")
iq = '(@v_flat:[VECTOR_RANGE $r $vec_param_flat]=>{$YIELD_DISTANCE_AS:dist_flat} @v_hnsw:[VECTOR_RANGE $r $vec_param_hnsw]=>{$YIELD_DISTANCE_AS:dist_hnsw})'
uq = iq.replace('} @v_hnsw', '} | @v_hnsw')
pm = "jsonb_build_object('vec_param_flat', array_fill(25::real, ARRAY[16]), 'vec_param_hnsw', array_fill(50::real, ARRAY[16]), 'knn_vec', array_fill(0::real, ARRAY[16]), 'r', 10000)"
case('vecsim:multiple_range_queries', 'vmr_idx', 'o', iq + ' SORTBY dist_flat RETURN 2 dist_flat dist_hnsw', pm, ids(range(25, 35)))
case('vecsim:multiple_range_queries', 'vmr_idx', 'o', iq + ' SORTBY dist_hnsw RETURN 2 dist_flat dist_hnsw', pm, ids(range(50, 40, -1)))
case('vecsim:multiple_range_queries', 'vmr_idx', 'o', uq + ' SORTBY num LIMIT 0 100 RETURN 2 dist_flat dist_hnsw', pm, ids(range(1, 76)))
case('vecsim:multiple_range_queries', 'vmr_idx', 'o', uq + ' @t:other SORTBY num DESC LIMIT 0 100 RETURN 2 dist_flat dist_hnsw', pm, ids(range(75, 0, -5)), True)
case('vecsim:multiple_range_queries', 'vmr_idx', 'o', iq + '=>[KNN 10 @v_hnsw $knn_vec AS knn_dist] SORTBY knn_dist RETURN 3 dist_flat dist_hnsw knn_dist', pm, ids(range(25, 35)))
case('vecsim:multiple_range_queries', 'vmr_idx', 'o', '(' + uq + ' @t:other)=>[KNN 20 @v_hnsw $knn_vec AS knn_dist] SORTBY knn_dist RETURN 2 dist_hnsw knn_dist LIMIT 0 20', pm, ids(range(5, 76, 5)), True)

# ---- test_query_with_knn_substr
sql("-- test_vecsim.py::test_query_with_knn_substr: doc<i> = [i, i], t 'knn' (odd i) or 'val'")
sql("CREATE TABLE rs.vks (k text, t text, v real[]);\nINSERT INTO rs.vks SELECT 'doc' || i, CASE WHEN i % 2 = 1 THEN 'knn' ELSE 'val' END, ARRAY[i, i] FROM generate_series(0, 9) i;\n"
    "SELECT ft.create('vks_idx', 'rs.vks', 'k', 'v', text_fields => '{t}') IS NOT NULL;")
case('vecsim:query_with_knn_substr', 'vks_idx', 'd', '(@t:KNN)=>[KNN 3 @v $BLOB]=>{$yield_distance_as: dist} SORTBY dist RETURN 1 dist', jp(BLOB=[0, 0]), 'doc1:2,doc3:18,doc5:50', True)
case('vecsim:query_with_knn_substr', 'vks_idx', 's', '(@t:KNN) NOCONTENT', None, 'doc1,doc3,doc5,doc7,doc9', True)

# ---- test_score_name_case_sensitivity (field VEC)
sql("-- test_vecsim.py::test_score_name_case_sensitivity, test_max_knn_k: doc<i> = [i, i] in field VEC")
sql('CREATE TABLE rs.vsn (k text, "VEC" real[]);\nINSERT INTO rs.vsn SELECT \'doc\' || i, ARRAY[i, i] FROM generate_series(0, 9) i;\n'
    "SELECT ft.create('vsn_idx', 'rs.vsn', 'k', 'VEC') IS NOT NULL;")
pk = jp(k=10, BLOB=[0, 0]); pb = jp(BLOB=[0, 0])
def fl(name):
    return ";".join(f"doc{i} " + (json.dumps({name: 2*i*i}) if name else "{}") for i in range(10))
cs = 'vecsim:score_name_case_sensitivity'
case(cs, 'vsn_idx', 'f', '*=>[KNN $k @VEC $BLOB]=>{$yield_distance_as: SCORE} RETURN 1 SCORE', pk, fl('SCORE'))
case(cs, 'vsn_idx', 'f', '*=>[KNN $k @VEC $BLOB]=>{$yield_distance_as: SCORE} RETURN 1 score', pk, fl(None))
case(cs, 'vsn_idx', 'f', '*=>[KNN $k @VEC $BLOB]=>{$yield_distance_as: score} RETURN 1 SCORE', pk, fl(None))
case(cs, 'vsn_idx', 'f', '*=>[KNN 10 @VEC $BLOB AS SCORE] RETURN 1 SCORE', pb, fl('SCORE'))
case(cs, 'vsn_idx', 'f', '*=>[KNN 10 @VEC $BLOB AS SCORE] RETURN 1 score', pb, fl(None))
case(cs, 'vsn_idx', 'f', '*=>[KNN 10 @VEC $BLOB AS score] RETURN 1 SCORE', pb, fl(None))
case(cs, 'vsn_idx', 'f', '*=>[KNN 10 @VEC $BLOB] RETURN 1 __VEC_score', pb, fl('__VEC_score'))
case(cs, 'vsn_idx', 'f', '*=>[KNN 10 @VEC $BLOB] RETURN 1 score', pk, fl(None))
case('vecsim:max_knn_k', 'vsn_idx', 'e', '*=>[KNN 576460752303423488 @VEC $BLOB AS score] RETURN 1 SCORE', pb, None)

print("-- Restated from RediSearch's tests/pytests/test_vecsim.py (commit 075d9f364f):\n-- the data each test loads and the answers its assertions give, as\n-- data.  Written by gen_vecsim.py (the tests' formulas for the expected\n-- ids and distances); included by conformance.sql after cases.sql.")
print("\n".join(out))
print("\nINSERT INTO rs.cases (src, text, idx, kind, q, p, expect) VALUES")
rows = []
for src, text, idx, kind, q, p, expect in cases:
    pe = p if p is None or not p.startswith("'") else p + "::jsonb"
    if p is None: pe = "NULL"
    rows.append(f" ({lit(src)}, {'true' if text else 'false'}, {lit(idx)}, '{kind}', {lit(q)}, {pe}, {lit(expect)})")
print(",\n".join(rows) + ";")
import sys; print(len(cases), file=sys.stderr)
