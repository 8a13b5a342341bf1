-- ft_dialect: conformance of ft.query with RediSearch's DIALECT 2, built
-- from the query-syntax examples of RediSearch's documentation (the
-- bicycle data set of its tutorials, with a few columns added).  Each case
-- is a query, its params and the answer RediSearch gives on the same
-- data: ids in order (ordered cases), ids as a set (full-text cases, which
-- RediSearch orders by its own score), ids with distances (vector cases,
-- L2 distances squared as RediSearch reports them), or the SQLSTATE of
-- the error for a construct refused.  Every case prints ok or the
-- difference.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
-- fuzzy terms (%word%) use its Levenshtein distance, as RediSearch
CREATE EXTENSION IF NOT EXISTS fuzzystrmatch;
RESET client_min_messages;
SET jit = off;
-- the stop word case says so
SET client_min_messages = warning;

CREATE TABLE bikes (id text, brand text, model text, description text,
  price numeric, condition text, tags text[], year int, rating float8,
  sku text, embedding real[]);
INSERT INTO bikes VALUES
 ('bicycle:0', 'Velorim', 'Jigger', 'Small and powerful, the Jigger is the best ride for the smallest of tikes', 270, 'new', '{kids}', 2019, 4.5, 'AB-1', '{0.1,0.9}'),
 ('bicycle:1', 'Bicyk', 'Hillcraft', 'Kids want to ride with as little weight as possible. Especially on an incline', 1200, 'used', '{kids,mountain}', 2020, 'Infinity', 'ab-1', '{0.2,0.8}'),
 ('bicycle:2', 'Nord', 'Chook air 5', 'The Chook Air 5 gives kids aged six years and older a durable and uberlight mountain bike for their first experience on tracks and easy cruising through forests and fields', 815, 'used', '{kids,mountain}', 2021, 3, 'AB-2', '{0.3,0.7}'),
 ('bicycle:3', 'Eva', 'Eva 291', 'The sister company to Nord, Eva launched in 2005 as the first and only women-dedicated bicycle brand', 3400, 'used', '{mountain,women}', 2005, '-Infinity', 'cd-3', '{0.9,0.1}'),
 ('bicycle:4', 'Noka Bikes', 'Kahuna', 'Whether you want to try your hand at XC racing or are looking for a lively trail bike', 3200, 'used', '{mountain,racing}', 2018, 5, 'CD-4', '{0.8,0.3}'),
 ('bicycle:5', 'Breakout', 'XBN 2.1 Alloy', 'The XBN 2.1 Alloy is our entry-level road bike but that does not mean it is a basic machine', 810, 'new', '{road}', 2022, NULL, 'EF-5', '{0.5,0.5}'),
 ('bicycle:6', 'ScramBikes', 'WattBike', 'The WattBike is the best e-bike for people who still feel young at heart', 2300, 'new', '{ebike}', 2023, 4, 'EF-6', '{0.6,0.6}'),
 ('bicycle:7', 'Peaknetic', 'Secto', 'If you struggle with stiff fingers or a kinked neck or back after a few minutes on the road, this lightweight aluminum bike alleviates those issues', 430, 'new', '{road,commuter}', 2022, 2.5, 'EF-7', '{0.4,0.2}'),
 ('bicycle:8', 'nHill', 'Summit', 'This budget mountain bike from nHill performs well both on bike paths and on the trail', 1200, 'new', '{mountain}', 2017, 4.5, 'EF-8', '{0.7,0.9}'),
 ('bicycle:9', 'BikeShind', 'ThrillCycle', 'An artsy, retro-inspired bicycle that is as functional as it is pretty', 815, 'refurbished', '{city,retro}', 2016, 1, 'EF-9', '{0,0}');
-- FT.CREATE idx:bicycle ... model TEXT description TEXT condition TAG
--   sku TAG CASESENSITIVE embedding VECTOR HNSW ... DISTANCE_METRIC L2
SELECT ft.create('bikes_idx', 'bikes', 'id', 'embedding',
  text_fields => '{model, description}', language => 'english',
  casesensitive => '{sku}');

-- the answer of a query: ids (without "bicycle:"), comma-separated, in
-- result order; with distances when asked; or the error
CREATE FUNCTION pg_temp.answer(q text, p jsonb, with_dist boolean)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r text;
BEGIN
  SELECT string_agg(replace(s.id, 'bicycle:', '') ||
           CASE WHEN with_dist THEN ':' || round(s.distance::numeric, 4) ELSE '' END,
           ',' ORDER BY s.ord)
    INTO r
    FROM ft.query('bikes_idx', q, p) WITH ORDINALITY s(id, distance, fields, ord);
  RETURN coalesce(r, '');
EXCEPTION WHEN OTHERS THEN
  RETURN 'ERROR ' || SQLSTATE || ': ' || SQLERRM;
END
$$;

-- kind: o = ids in order, s = ids as a set, d = ids and distances in
-- order, e = an error (expect is its SQLSTATE)
CREATE TABLE cases (n serial, kind "char", q text, p jsonb, expect text);
\set v '{"v": [0, 0]}'

-- ---- tags ------------------------------------------------------------
INSERT INTO cases (kind, q, p, expect) VALUES
 ('o', '*', NULL, '0,1,2,3,4,5,6,7,8,9'),
 ('o', '@condition:{new}', NULL, '0,5,6,7,8'),
 ('o', '@condition:{used}', NULL, '1,2,3,4'),
 ('o', '@condition:{New}', NULL, '0,5,6,7,8'),
 ('o', '@condition:{NEW}', NULL, '0,5,6,7,8'),
 ('o', '@condition:{new | used}', NULL, '0,1,2,3,4,5,6,7,8'),
 ('o', '@condition:{new|refurbished}', NULL, '0,5,6,7,8,9'),
 ('o', '-@condition:{new}', NULL, '1,2,3,4,9'),
 ('o', '-@condition:{new | used}', NULL, '9'),
 ('o', '@condition:{refurb*}', NULL, '9'),
 ('o', '@condition:{*ed}', NULL, '1,2,3,4,9'),
 ('o', '@condition:{*se*}', NULL, '1,2,3,4'),
 ('o', '@condition:{w''?ew''}', NULL, '0,5,6,7,8'),
 ('o', '@condition:{w''*e*''}', NULL, '0,1,2,3,4,5,6,7,8,9'),
 ('o', '@condition:{"new"}', NULL, '0,5,6,7,8'),
 ('o', '@condition:{"ne"*}', NULL, '0,5,6,7,8'),
 ('o', '@condition:{*"sed"}', NULL, '1,2,3,4'),
 ('o', '@condition:{$c}', '{"c": "used"}', '1,2,3,4'),
 ('o', '@condition:{$c}', '{"c": "USED"}', '1,2,3,4'),
 ('o', '@condition:{$c}', '{"c": ["new", "refurbished"]}', '0,5,6,7,8,9'),
 ('o', '@condition:{$c*}', '{"c": "ref"}', '9'),
 ('o', '@condition:{*$c}', '{"c": "sed"}', '1,2,3,4'),
 ('o', '@condition:{$a | $b}', '{"a": "new", "b": "used"}', '0,1,2,3,4,5,6,7,8'),
 ('o', '@brand:{noka $w}', '{"w": "bikes"}', '4'),
 ('o', '@brand:{$w bikes}', '{"w": "Noka"}', '4'),
 ('o', '@brand:{noka\ $w | $v}', '{"w": "bikes", "v": "nhill"}', '4,8'),
 ('o', '@brand:{noka \$w}', '{"w": "bikes"}', ''),
 ('o', '@brand:{Noka Bikes}', NULL, '4'),
 ('o', '@brand:{noka bikes}', NULL, '4'),
 ('o', '@brand:{Noka\ Bikes}', NULL, '4'),
 ('o', '@brand:{ noka bikes }', NULL, '4'),
 ('o', '@brand:{nhill}', NULL, '8'),
 ('o', '@brand:{*bikes}', NULL, '4,6'),
 ('o', '@brand:{bike*}', NULL, '9'),
 ('o', '@brand:{*ik*}', NULL, '4,6,9'),
 ('o', '@tags:{mountain}', NULL, '1,2,3,4,8'),
 ('o', '@tags:{road | city}', NULL, '5,7,9'),
 ('o', '@tags:{road} @tags:{commuter}', NULL, '7'),
 ('o', '@tags:{mount*}', NULL, '1,2,3,4,8'),
 ('o', '@tags:{*o*}', NULL, '1,2,3,4,5,7,8,9'),
 ('o', '@tags:{KIDS}', NULL, '0,1,2'),
 ('o', '-@tags:{kids | mountain}', NULL, '5,6,7,9'),
 ('o', '@sku:{AB-1}', NULL, '0'),
 ('o', '@sku:{ab-1}', NULL, '1'),
 ('o', '@sku:{AB*}', NULL, '0,2'),
 ('o', '@sku:{ab*}', NULL, '1'),
 ('o', '@sku:{*D-4}', NULL, '4'),
 ('o', '@sku:{ef-5}', NULL, ''),
 ('o', '@sku:{$s}', '{"s": "CD-4"}', '4'),
-- ---- numeric ranges ----------------------------------------------------
 ('o', '@price:[500 1000]', NULL, '2,5,9'),
 ('o', '@price:[500,1000]', NULL, '2,5,9'),
 ('o', '@price:[270]', NULL, '0'),
 ('o', '@price:[270 270]', NULL, '0'),
 ('o', '@price:{270}', NULL, '0'),
 ('o', '@price:{270.00|1200}', NULL, '0,1,8'),
 ('o', '@year:{2021}', NULL, '2'),
 ('o', '@rating:{4.5}', NULL, '0,8'),
 ('o', '@price:[1200]', NULL, '1,8'),
 ('o', '@price:[(270 430]', NULL, '7'),
 ('o', '@price:[(270 (430]', NULL, ''),
 ('o', '@price:[(1000 +inf]', NULL, '1,3,4,6,8'),
 ('o', '@price:[1000 inf]', NULL, '1,3,4,6,8'),
 ('o', '@price:[-inf 500]', NULL, '0,7'),
 ('o', '@price:[-inf (430]', NULL, '0'),
 ('o', '@price:[-inf +inf]', NULL, '0,1,2,3,4,5,6,7,8,9'),
 ('o', '@price:[+inf +inf]', NULL, ''),
 ('o', '@price:[$lo $hi]', '{"lo": 800, "hi": 900}', '2,5,9'),
 ('o', '@price:[$lo $hi]', '{"lo": "800", "hi": "+inf"}', '1,2,3,4,5,6,8,9'),
 ('o', '@price:[-$x 300]', '{"x": -200}', '0'),
 ('o', '@price:[-$x $y]', '{"x": 1000, "y": 500}', '0,7'),
 ('o', '@price:[$p]', '{"p": 815}', '2,9'),
 ('o', '@price:[($p +inf]', '{"p": 3200}', '3'),
 ('o', '@year:[2020 2022]', NULL, '1,2,5,7'),
 ('o', '@year:[(2020 (2022]', NULL, '2'),
 ('o', '-@year:[2000 2020]', NULL, '2,5,6,7'),
 ('o', '@year:[2.02e3 2021]', NULL, '1,2'),
 ('o', '@rating:[(4 +inf]', NULL, '0,1,4,8'),
 ('o', '@rating:[(4 (+inf]', NULL, '0,4,8'),
 ('o', '@rating:[4 +inf]', NULL, '0,1,4,6,8'),
 ('o', '@rating:[-inf (3]', NULL, '3,7,9'),
 ('o', '@rating:[(-inf (3]', NULL, '7,9'),
 ('o', '@rating:[-inf 3]', NULL, '2,3,7,9'),
 ('o', '@rating:[4.5]', NULL, '0,8'),
 ('o', '-@rating:[-inf +inf]', NULL, '5'),
 ('o', '@rating:[(-inf (+inf]', NULL, '0,2,4,6,7,8,9'),
-- ---- AND, OR, NOT, grouping --------------------------------------------
 ('o', '@price:[1000 +inf] @condition:{new}', NULL, '6,8'),
 ('o', '@price:[1000 +inf] | @condition:{refurbished}', NULL, '1,3,4,6,8,9'),
 ('o', '@price:[500 1000] -@condition:{used}', NULL, '5,9'),
 ('o', '(@condition:{new} @price:[-inf 500]) | @tags:{retro}', NULL, '0,7,9'),
 ('o', '@condition:{new} @price:[-inf 500] | @tags:{retro}', NULL, '0,7,9'),
 ('o', '@condition:{new} (@price:[-inf 500] | @tags:{retro})', NULL, '0,7'),
 ('o', '-(@condition:{new} | @tags:{mountain})', NULL, '9'),
 ('o', '-(-@condition:{new})', NULL, '0,5,6,7,8'),
 ('o', '* @condition:{used}', NULL, '1,2,3,4'),
 ('o', '((((@condition:{used}))))', NULL, '1,2,3,4'),
-- ---- ordering and paging -----------------------------------------------
 ('o', '@price:[500 1000] SORTBY price', NULL, '5,2,9'),
 ('o', '@price:[500 1000] SORTBY price DESC', NULL, '2,9,5'),
 ('o', '@price:[500 1000] SORTBY @price ASC', NULL, '5,2,9'),
 ('o', '* SORTBY year', NULL, '3,9,8,4,0,1,2,5,7,6'),
 ('o', '* SORTBY year DESC LIMIT 0 3', NULL, '6,5,7'),
 ('o', '* LIMIT 2 3', NULL, '2,3,4'),
 ('o', '* LIMIT 0 0', NULL, ''),
 ('o', '@condition:{new} LIMIT 1 2', NULL, '5,6'),
 ('o', '* SORTBY rating DESC LIMIT 0 4', NULL, '1,4,0,8'),
 ('o', '* LIMIT $o $n', '{"o": 8, "n": 5}', '8,9'),
 ('o', '*', '{"LIMIT": [0, 2]}', '0,1'),
 ('o', '*', '{"SORTBY": ["price", "DESC"], "LIMIT": [0, 2]}', '3,4'),
 ('o', '* DIALECT 2', NULL, '0,1,2,3,4,5,6,7,8,9'),
 ('o', '* dialect 2 limit 0 1', NULL, '0'),
 -- INKEYS: only the docs with these keys
 ('o', '@condition:{new} INKEYS 3 bicycle:5 bicycle:9 bicycle:0', NULL, '0,5'),
 ('d', '*=>[KNN 2 @embedding $v] INKEYS 2 bicycle:3 bicycle:8', :'v', '3:0.8200,8:1.3000'),
-- ---- KNN (distances: L2 squared) ----------------------------------------
 ('d', '*=>[KNN 3 @embedding $v]', :'v', '5:0.5000,7:0.2000,9:0.0000'),
 ('d', '*=>[KNN 3 @embedding $v AS dist] SORTBY dist', :'v', '9:0.0000,7:0.2000,5:0.5000'),
 ('d', '*=>[KNN 3 @embedding $v] SORTBY __embedding_score', :'v', '9:0.0000,7:0.2000,5:0.5000'),
 ('d', '*=>[KNN 8 @embedding $v AS d] SORTBY d', :'v', '9:0.0000,7:0.2000,5:0.5000,2:0.5800,1:0.6800,6:0.7200,4:0.7300,0:0.8200'),
 ('d', '*=>[KNN 3 @embedding $v AS dist] SORTBY dist DESC', :'v', '5:0.5000,7:0.2000,9:0.0000'),
 ('d', '@condition:{new}=>[KNN 2 @embedding $v]', :'v', '5:0.5000,7:0.2000'),
 ('d', '(@price:[500 1000])=>[KNN 2 @embedding $v]', :'v', '5:0.5000,9:0.0000'),
 ('d', '(-@tags:{road})=>[KNN 2 @embedding $v]', :'v', '2:0.5800,9:0.0000'),
 ('d', '*=>[KNN $k @embedding $v]', '{"k": 2, "v": [0, 0]}', '7:0.2000,9:0.0000'),
 ('d', '*=>[KNN 4 @embedding $v EF_RUNTIME 50]', :'v', '2:0.5800,5:0.5000,7:0.2000,9:0.0000'),
 ('d', '*=>[KNN 2 @embedding $v EF_RUNTIME $ef]', '{"ef": 10, "v": [0, 0]}', '7:0.2000,9:0.0000'),
 ('d', '*=>[KNN 2 @embedding $v]=>{$YIELD_DISTANCE_AS: d; $EF_RUNTIME: 20}', :'v', '7:0.2000,9:0.0000'),
 ('d', '*=>[KNN 3 @embedding $v AS $a] SORTBY score DESC', '{"a": "score", "v": [0, 0]}', '5:0.5000,7:0.2000,9:0.0000'),
 ('d', '*=>[KNN 3 @embedding $v]=>{$YIELD_DISTANCE_AS: $a} SORTBY s DESC', '{"a": "s", "v": [0, 0]}', '5:0.5000,7:0.2000,9:0.0000'),
 ('d', '(@tags:{road})=>[KNN 5 @embedding $v HYBRID_POLICY BATCHES BATCH_SIZE 2]', :'v', '5:0.5000,7:0.2000'),
 ('d', '(@tags:{road})=>[KNN 5 @embedding $v HYBRID_POLICY ADHOC_BF]', :'v', '5:0.5000,7:0.2000'),
 ('d', '(@tags:{road})=>[KNN 5 @embedding $v]=>{$HYBRID_POLICY: BATCHES; $BATCH_SIZE: 10}', :'v', '5:0.5000,7:0.2000'),
 ('d', '*=>[KNN 20 @embedding $v]', :'v', '0:0.8200,1:0.6800,2:0.5800,3:0.8200,4:0.7300,5:0.5000,6:0.7200,7:0.2000,8:1.3000,9:0.0000'),
 ('d', '*=>[KNN 20 @embedding $v] LIMIT 8 5', :'v', '8:1.3000,9:0.0000'),
 ('d', '*=>[KNN 3 @embedding $v] SORTBY price', :'v', '7:0.2000,5:0.5000,9:0.0000'),
 ('d', '*=>[KNN 0 @embedding $v]', :'v', ''),
 ('d', '@embedding:[VECTOR_RANGE 0.55 $v]', :'v', '5:0.5000,7:0.2000,9:0.0000'),
 ('d', '@embedding:[VECTOR_RANGE 0.51 $v]', :'v', '5:0.5000,7:0.2000,9:0.0000'),
 ('d', '@embedding:[VECTOR_RANGE 0.55 $v]=>{$YIELD_DISTANCE_AS: d} SORTBY d', :'v', '9:0.0000,7:0.2000,5:0.5000'),
 ('d', '@embedding:[VECTOR_RANGE $r $v]', '{"r": 0.25, "v": [0, 0]}', '7:0.2000,9:0.0000'),
 ('d', '@embedding:[VECTOR_RANGE 0.55 $v]=>{$EPSILON: 0.01}', :'v', '5:0.5000,7:0.2000,9:0.0000'),
 ('d', '@embedding:[VECTOR_RANGE 0.55 $v] @condition:{new}', :'v', '5:0.5000,7:0.2000'),
 ('d', '@embedding:[VECTOR_RANGE 0 $v]', :'v', '9:0.0000'),
 ('d', '@embedding:[VECTOR_RANGE 0.55 $v] LIMIT 1 1', :'v', '7:0.2000'),
 ('o', '@embedding:[VECTOR_RANGE 0.55 $v] | @condition:{refurbished}', :'v', '5,7,9'),
 ('o', '-@embedding:[VECTOR_RANGE 0.55 $v]', :'v', '0,1,2,3,4,6,8'),
 ('d', '*=>[KNN 2 @embedding $v]', '{"v": "AAAAAAAAAAA="}', '7:0.2000,9:0.0000'),
-- ---- full text (TEXT fields model and description, english) -------------
 ('s', 'bike', NULL, '2,4,5,6,7,8'),
 ('s', 'bikes', NULL, '2,4,5,6,7,8'),
 ('s', 'BIKE', NULL, '2,4,5,6,7,8'),
 ('s', 'mountain bike', NULL, '2,8'),
 -- a prefix shorter than 2 characters matches nothing, as in RediSearch
 ('s', 'b*', NULL, ''),
 ('s', 'bi* b*', NULL, ''),
 ('s', 'bi*', NULL, '2,3,4,5,6,7,8,9'),
 ('s', '"mountain bike"', NULL, '2,8'),
 ('s', '"bike mountain"', NULL, ''),
 ('s', '"first experience"', NULL, '2'),
 ('s', 'first', NULL, '2,3'),
 ('s', 'kids | small', NULL, '0,1,2'),
 ('s', 'kids|small', NULL, '0,1,2'),
 ('s', 'kids -mountain', NULL, '1'),
 ('s', '-bike', NULL, '0,1,3,9'),
 ('s', '-(kids | bike)', NULL, '0,3,9'),
 ('s', 'road bike', NULL, '5,7'),
 ('s', 'bicycle', NULL, '3,9'),
 ('s', 'ride', NULL, '0,1'),
 ('s', 'riding', NULL, '0,1'),
 ('s', 'trail bike', NULL, '4,8'),
 ('s', '2005', NULL, '3'),
 ('s', 'xbn 2.1', NULL, '5'),
 ('s', 'Kahuna', NULL, '4'),
 ('s', 'hill*', NULL, '1'),
 ('s', 'bi*', NULL, '2,3,4,5,6,7,8,9'),
 ('s', '*craft', NULL, '1'),
 ('s', '*cycle', NULL, '3,9'),
 ('s', '*ill*', NULL, '1,6,8,9'),
 ('s', 'w''*bike''', NULL, '2,4,5,6,7,8'),
 ('s', 'w''x?n''', NULL, '5'),
 ('s', '~kids bike', NULL, '2,4,5,6,7,8'),
 ('s', 'bike ~kids', NULL, '2,4,5,6,7,8'),
 ('s', '@model:jigger', NULL, '0'),
 ('s', '@model:(chook air)', NULL, '2'),
 ('s', '@model:"chook air"', NULL, '2'),
 ('s', '@model:(hill* | summit)', NULL, '1,8'),
 ('s', '@model:bike', NULL, ''),
 ('s', '@description:(kids | small)', NULL, '0,1,2'),
 ('s', '@description:(kids | small) @condition:{new | used}', NULL, '0,1,2'),
 ('s', '@description:(kids | small) @condition:{new}', NULL, '0'),
 ('s', '@description:trail -@model:summit', NULL, '4'),
 ('s', '@description|model:eva', NULL, '3'),
 ('s', '@model|description:(eva nord)', NULL, '3'),
 ('s', '(@model:jigger) | (@price:[3000 +inf])', NULL, '0,3,4'),
 ('s', '(kids | women) @price:[1000 +inf]', NULL, '1,3'),
 ('s', 'bike @tags:{road}', NULL, '5,7'),
 ('s', 'bike -@tags:{mountain}', NULL, '5,6,7'),
 ('s', '"road" bike', NULL, '5,7'),
 ('s', '$w', '{"w": "mountain"}', '2,8'),
 ('s', '$w bike', '{"w": "trail"}', '4,8'),
 ('s', '"limit"', NULL, ''),
 ('s', 'the', NULL, ''),
 ('s', '%mountan%', NULL, '2,8'),
 ('s', '%%moutnain%%', NULL, '2,8'),
 ('s', '%bke%', NULL, '2,4,5,6,7,8'),
 ('s', '@model:%summt%', NULL, '8'),
 ('s', '%$w%', '{"w": "mountan"}', '2,8'),
 ('s', '@model:(%%$w%%)', '{"w": "sumit"}', '8'),
 ('s', 'bike=>{$weight: 2.0}', NULL, '2,4,5,6,7,8'),
 ('s', '@model:$w=>{$weight: $x}', '{"w": "kahuna", "x": 2}', '4'),
 ('d', '@model:$w=>{$weight: 2}=>[KNN 2 @embedding $v]', '{"w": "summit", "v": [0, 0]}', '8:1.3000'),
 ('d', '(mountain)=>[KNN 2 @embedding $v] SORTBY __embedding_score', '{"v": [0.75, 0.85]}', '8:0.0050,2:0.2250'),
 ('d', '(bike -mountain)=>[KNN 2 @embedding $v] SORTBY __embedding_score', :'v', '7:0.2000,5:0.5000'),
 ('d', '(kids)=>[KNN 5 @embedding $v] SORTBY __embedding_score', :'v', '2:0.5800,1:0.6800');

-- ---- refused: what RediSearch refuses, and what segvec does not support --
INSERT INTO cases (kind, q, p, expect) VALUES
 ('e', '*=>[KNN 3 @embedding $v EF_RUNTIME 10 EF_RUNTIME 20]', :'v', '42601'),
 ('e', '*=>[KNN 3 @embedding $v EF_RUNTIME 10]=>{$EF_RUNTIME: 20}', :'v', '42601'),
 ('e', '*=>[KNN 3 @embedding $v AS a AS b]', :'v', '42601'),
 ('e', '*=>[KNN 3 @embedding $v AS price]', :'v', '42701'),
 ('e', '*=>[KNN 3 @embedding $v AS $a]', '{"a": "brand", "v": [0, 0]}', '42701'),
 ('e', '@embedding:[VECTOR_RANGE 0.5 $v]=>{$YIELD_DISTANCE_AS: year}', :'v', '42701'),
 ('e', '@embedding:[VECTOR_RANGE -1 $v]', :'v', '22023'),
 ('e', '@embedding:[VECTOR_RANGE $r $v]', '{"r": -0.5, "v": [0, 0]}', '22023'),
 ('e', '@embedding:[VECTOR_RANGE 0.5 $v]=>{$EPSILON: -1}', :'v', '22023'),
 ('e', '@embedding:[VECTOR_RANGE 0.5 $v]=>{$EPSILON: 0}', :'v', '22023'),
 ('e', '@embedding:[VECTOR_RANGE 0.5 $v]=>{$YIELD_DISTANCE_AS: d} @embedding:[VECTOR_RANGE 0.7 $v]=>{$YIELD_DISTANCE_AS: d}', :'v', '42701'),
 ('e', '*=>[KNN 576460752303423488 @embedding $v]', :'v', '54000'),
 ('e', '@condition:{new}=>[KNN 3 @embedding $v HYBRID_POLICY ADHOC_BF EF_RUNTIME 10]', :'v', '42601'),
 ('e', '@embedding:[VECTOR_RANGE 0.5 $v]=>{$EPSILON: 0.1; $EPSILON: 0.2}', :'v', '42601'),
 ('e', '@embedding:[VECTOR_RANGE 0.5 $v]=>{$EF_RUNTIME: 5}', :'v', '42601'),
 ('e', '@price:[1 -inf]', NULL, '42601'),
 ('e', '@price:[(1 (-inf]', NULL, '42601'),
 ('e', '@price:[$a $b]', '{"a": 1, "b": "-inf"}', '22023'),
 ('e', '@price:[(270]', NULL, '42601'),
 ('e', '@price:[1 2', NULL, '42601'),
 ('e', '@price:[a b]', NULL, '42601'),
 ('e', '@price:[$a 2]', '{"a": "cheap"}', '22023'),
 ('e', '*=>[KNN 3 @embedding $v HYBRID_POLICY BATCHES]', :'v', '42601'),
 ('e', '*=>[KNN 3 @embedding $v BATCH_SIZE 10]', :'v', '42601'),
 ('e', '@condition:{new}=>[KNN 3 @embedding $v HYBRID_POLICY ADHOC_BF BATCH_SIZE 10]', :'v', '42601'),
 ('e', '@condition:{new}=>[KNN 3 @embedding $v HYBRID_POLICY FOO]', :'v', '42601'),
 ('e', '@condition:{new}=>[KNN 3 @embedding $v HYBRID_POLICY BATCHES HYBRID_POLICY BATCHES]', :'v', '42601'),
 ('e', '@condition:{new}=>[KNN 3 @embedding $v BATCH_SIZE 0]', :'v', '22023'),
 ('e', '*=>[KNN 3 @embedding $v EPSILON 0.1]', :'v', '42601'),
 ('e', '*=>[KNN 3 @embedding $v EF_RUNTIME 0]', :'v', '22023'),
 ('e', '*=>[KNN 3 @embedding $v EF_RUNTIME 1001]', :'v', '22023'),
 ('e', '*=>[KNN 3 @embedding $v]=>{$FOO: 1}', :'v', '42601'),
 ('e', '*=>[KNN -1 @embedding $v]', :'v', '42601'),
 ('e', '*=>[KNN 3 @price $v]', :'v', '42809'),
 ('e', '*=>[KNN 3 @embedding $nosuch]', :'v', '42P02'),
 ('e', '*=>[KNN 3 @embedding $v]', '{"v": [1, 2, 3]}', '22000'),
 ('e', '*=>[KNN 3 @embedding $v]', '{"v": "not base64!"}', '22023'),
 ('e', '*=>[KNN 3 @embedding $v AS $a]', :'v', '42P02'),
 ('e', '@condition:{$c}', NULL, '42P02'),
 ('e', '@condition:{new', NULL, '42601'),
 ('e', '@nosuch:{a}', NULL, '42703'),
 ('e', '@condition:[1 2]', NULL, '42804'),
 ('e', '@embedding:{x}', NULL, '42804'),
 ('e', '@price:{27*}', NULL, '42804'),
 ('e', '@price:{cheap}', NULL, '22023'),
 ('e', '@brand:hello', NULL, '42804'),
 ('e', '@brand|model:hello', NULL, '42804'),
 ('e', '@brand|model:{hello}', NULL, '42601'),
 ('e', '* SORTBY nosuch', NULL, '42703'),
 ('e', '* LIMIT 0 10 LIMIT 0 5', NULL, '42601'),
 ('e', '* WITHSCORES WITHSCORES', NULL, '42601'),
 ('e', '* LIMIT 0', NULL, '42601'),
 ('e', '* RETURN 2 brand', NULL, '42601'),
 ('e', '* DIALECT 1', NULL, '0A000'),
 ('e', '* DIALECT 3', NULL, '0A000'),
 ('e', '* PARAMS 2 a b', NULL, '42601'),
 ('e', '*', '{"DIALECT": 1}', '0A000'),
 ('e', '* LIMIT 0 1', '{"LIMIT": [0, 2]}', '22023'),
 ('e', 'bike SLOP 1 SLOP 2', NULL, '42601'),
 ('e', 'bike INORDER INORDER', NULL, '42601'),
 ('e', '"mountain bike"=>{$slop: 1}', NULL, '0A000'),
 ('e', '"mountain bike" kids SLOP 3', NULL, '0A000'),
 ('e', 'bike=>{$phonetic: true}', NULL, '0A000'),
 ('e', 'bike VERBATIM', NULL, '0A000'),
 ('e', 'bike NOSTOPWORDS', NULL, '0A000'),
 ('e', 'bike LANGUAGE german', NULL, '0A000'),
 ('e', 'bike EXPANDER x', NULL, '0A000'),
 ('e', '* HIGHLIGHT', NULL, '0A000'),
 ('e', '* SUMMARIZE', NULL, '0A000'),
 ('e', '* INFIELDS 1 model', NULL, '0A000'),
 ('e', '* GEOFILTER loc 1 2 3 km', NULL, '0A000'),
 ('e', '* FILTER price 1 2', NULL, '0A000'),
 ('e', '* TIMEOUT 10', NULL, '0A000'),
 ('e', '@loc:[-122.4 37.7 5 km]', NULL, '0A000'),
 ('e', '@loc:[$lon $lat $r km]', NULL, '0A000'),
 ('e', '@shape:[WITHIN $poly]', NULL, '0A000'),
 ('e', 'bike SCORER DISMAX', NULL, '0A000'),
 ('e', 'bike SCORER HAMMING', NULL, '0A000'),
 ('e', 'bike SCORER', NULL, '42601'),
 ('e', '%%%%bike%%%%', NULL, '42601'),
 ('e', '%bike', NULL, '42601'),
 ('e', '"unclosed phrase', NULL, '42601'),
 ('e', 'w''unclosed', NULL, '42601'),
 ('e', repeat('(', 65) || 'bike' || repeat(')', 65), NULL, '54001'),
 ('e', repeat('-', 70) || 'bike', NULL, '54001'),
 ('e', 'bike )', NULL, '42601'),
 ('e', '', NULL, '42601'),
 ('e', '@', NULL, '42601'),
 ('e', '=>[KNN 3 @embedding $v]', :'v', '42601'),
-- ---- SLOP and INORDER (RediSearch's FT.SEARCH options and the $slop /
-- $inorder attributes): words of an AND within n other words of each
-- other, in query order with INORDER; tags and ranges are not placed
 ('s', 'mountain bike SLOP 0', NULL, '2,8'),
 ('s', 'bike mountain SLOP 0', NULL, '2,8'),
 ('s', 'bike mountain SLOP 0 INORDER', NULL, ''),
 ('s', 'mountain bike SLOP 0 INORDER', NULL, '2,8'),
 ('s', 'budget bike SLOP 0', NULL, ''),
 ('s', 'budget bike SLOP 1', NULL, '8'),
 ('s', 'bike budget SLOP 1', NULL, '8'),
 ('s', 'bike budget SLOP 1 INORDER', NULL, ''),
 ('s', 'budget bike INORDER', NULL, '8'),
 ('s', 'bike budget INORDER', NULL, ''),
 ('s', 'bike SLOP 0', NULL, '2,4,5,6,7,8'),
 ('s', '(budget bike)=>{$slop: 1}', NULL, '8'),
 ('s', '(budget bike)=>{$slop: 0}', NULL, ''),
 ('s', '(bike budget)=>{$slop: 1; $inorder: true}', NULL, ''),
 ('s', '(budget bike)=>{$slop: 1; $inorder: true}', NULL, '8'),
 ('s', '((budget|first) bike)=>{$slop: 1}', NULL, '8'),
 ('s', '(kids aged)=>{$inorder: true}', NULL, '2'),
 ('s', '(aged kids)=>{$inorder: true}', NULL, ''),
 ('s', '@condition:{used} kids SLOP 0', NULL, '1,2'),
 ('s', '@condition:{used} mountain bike SLOP 0 INORDER', NULL, '2'),
 ('s', 'mountain -budget bike SLOP 0', NULL, '2'),
 ('s', 'mountain ~budget bike SLOP 0', NULL, '2,8'),
 ('s', '"mountain bike"=>{$inorder: true}', NULL, '2,8'),
 ('e', '(budget bike)=>{$slop: 1; $slop: 2}', NULL, '42601'),
 ('e', '(budget bike)=>{$inorder: maybe}', NULL, '42601'),
 ('e', 'budget %bik% SLOP 1', NULL, '0A000'),
 ('e', '@model:budget @description:bike SLOP 1', NULL, '0A000'),
-- ---- $weight: multiplies the score of its terms (the order shows it) ----
 ('o', '(mountain => {$weight: 10}) | (small => {$weight: 0.1})', NULL, '2,8,0'),
 ('o', '(mountain => {$weight: 0.1}) | (small => {$weight: 10})', NULL, '0,2,8'),
 ('e', 'mountain => {$weight: -1}', NULL, '22023'),
-- ---- a lower bound of +inf with a finite upper bound (min > max) -------
 ('e', '@price:[+inf 5]', NULL, '22023'),
 ('e', '@price:[(inf 5]', NULL, '22023');

SELECT n, kind, q, p, expect,
       pg_temp.answer(q, p, kind = 'd') AS got
  INTO TEMP results FROM cases;

-- set cases compare sorted ids
SELECT n, kind, q, p,
       CASE WHEN kind = 'e' THEN
              CASE WHEN got LIKE 'ERROR ' || expect || ':%' THEN 'ok' ELSE 'expected ERROR ' || expect END
            WHEN kind = 's' THEN
              CASE WHEN (SELECT coalesce(string_agg(x, ',' ORDER BY x), '') FROM unnest(string_to_array(got, ',')) x) = expect
                   THEN 'ok' ELSE 'expected ' || expect END
            ELSE CASE WHEN got = expect THEN 'ok' ELSE 'expected ' || expect END
       END AS verdict,
       got
  FROM results
  ORDER BY n;

SELECT count(*) AS cases,
       count(*) FILTER (WHERE kind <> 'e') AS answers,
       count(*) FILTER (WHERE kind = 's') AS full_text,
       count(*) FILTER (WHERE kind = 'e') AS refused
  FROM cases;

-- an IP index reports 1 - the inner product, as RediSearch's
-- DISTANCE_METRIC IP (the operator <#> is minus the inner product)
SELECT ft.create('bikes_ip', 'bikes', 'id', 'embedding', metric => 'ip');
SELECT replace(id, 'bicycle:', '') AS id, round(distance::numeric, 4) AS distance
  FROM ft.query('bikes_ip', '*=>[KNN 3 @embedding $v]', '{"v": [1, 1]}');
SELECT ft.dropindex('bikes_ip');

-- without a language, TEXT fields use ft.english_redisearch: english
-- stemming with RediSearch's default stop words, so "you" (a stop word of
-- PostgreSQL's english, not of RediSearch) is searched, "the" is not
SELECT ft.create('bikes_rs', 'bikes', 'id', 'embedding',
  text_fields => '{description}');
SELECT replace(id, 'bicycle:', '') AS id
  FROM ft.query('bikes_rs', '@description:(you want)');
SELECT replace(id, 'bicycle:', '') AS id
  FROM ft.query('bikes_rs', '@description:(the want)');
SELECT replace(id, 'bicycle:', '') AS id
  FROM ft.query('bikes_idx', '@description:(you want)');
SELECT ft.dropindex('bikes_rs');
DROP EXTENSION fuzzystrmatch;
