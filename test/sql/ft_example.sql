-- The getting-started example of docs/ft-api.md, run as written.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;

CREATE TABLE products (
    id        bigint,
    title     text,
    category  text,
    price     numeric,
    embedding real[]
);
INSERT INTO products VALUES
    (1, 'red shoes',    'shoes', 49.90, '{0.9, 0.1, 0.0}'),
    (2, 'blue shoes',   'shoes', 59.00, '{0.8, 0.2, 0.1}'),
    (3, 'red hat',      'hats',  19.50, '{0.9, 0.0, 0.3}'),
    (4, 'green hat',    'hats',  25.00, '{0.1, 0.9, 0.2}'),
    (5, 'green scarf',  'misc',  12.00, '{0.2, 0.8, 0.1}');

-- FT.CREATE: the segvec index (INCLUDE the id) and a btree on the id
SELECT ft.create('products_idx', 'products', 'id', 'embedding');

-- FT.SEARCH, KNN: the 3 nearest products
SELECT * FROM ft.search('products_idx', '{1, 0, 0}', 3);

-- the same with a filter, returning two fields
SELECT * FROM ft.search('products_idx', '{1, 0, 0}', 3,
    filter => '@category:{shoes | hats} @price:[-inf (50]',
    return_fields => '{title, price}');

-- the RediSearch query syntax, with the vector as a parameter
SELECT * FROM ft.query('products_idx',
    '(-@category:{misc})=>[KNN 2 @embedding $vec AS score] RETURN 2 title score',
    '{"vec": [1, 0, 0]}');

-- the vector as Redis clients send it: base64 of little-endian float32
SELECT id, distance FROM ft.query('products_idx',
    '*=>[KNN 2 @embedding $vec]', '{"vec": "AACAPwAAAAAAAAAA"}');

-- a range query and a plain filter, sorted
SELECT id, distance FROM ft.query('products_idx',
    '@embedding:[VECTOR_RANGE 0.5 $vec]', '{"vec": [1, 0, 0]}');
SELECT id, fields FROM ft.query('products_idx',
    '@price:[10 30] SORTBY price DESC RETURN 1 title');

-- FT._LIST and FT.DROPINDEX (DD: delete the docs too)
SELECT index, tbl, id_column, vector_column, metric, num_docs FROM ft.list()
WHERE tbl = 'products'::regclass;
SELECT ft.dropindex('products_idx', delete_docs => true);
DROP TABLE products;
