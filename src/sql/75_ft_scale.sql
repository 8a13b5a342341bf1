
/*
 * Scaling out: the ft API on partitioned tables and on Citus (README,
 * "Scaling out"; src/ft/ftpart.c).  A function given the segvec index of
 * a partitioned table runs on each partition's index and combines the
 * results; on a Citus table it runs on each shard's index through Citus.
 */

/*
 * ft._partition_indexes(index): the segvec indexes of the leaf partitions
 * of a partitioned segvec index, by partition name (the index itself when
 * it is not partitioned).  Internal.
 */
CREATE FUNCTION ft._partition_indexes(index regclass)
	RETURNS SETOF regclass
	AS 'MODULE_PATHNAME', 'ft_partition_indexes'
	LANGUAGE C STRICT;

/*
 * ft._ensure_id_btree(tbl, id_column): make sure tbl has a btree that
 * leads with id_column, as ft.create needs for merge-insert.  A unique one
 * when the ids are unique and a unique index can be built on them; on a
 * partitioned table a unique index must contain the partition key, and on
 * a Citus distributed table the distribution column, so when the id is
 * not that, the btree is a plain one and a WARNING says what that means
 * for upserts.  Runs as the caller.  Internal.
 */
CREATE FUNCTION ft._ensure_id_btree(tbl regclass, id_column name)
	RETURNS void
	LANGUAGE plpgsql VOLATILE
	SET search_path = pg_catalog, pg_temp
	AS $$
DECLARE
	qual text;
	tblname name;
	dist text;
	err text;
BEGIN
	IF ft.has_key_btree_index(tbl, id_column) THEN
		RETURN;
	END IF;
	SELECT format('%I.%I', n.nspname, c.relname), c.relname INTO qual, tblname
	FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE c.oid = tbl;

	-- a Citus hash-distributed table by another column: no unique index
	dist := ft._citus_distribution_column(tbl);
	IF dist IS NOT NULL AND dist IS DISTINCT FROM id_column::text THEN
		RAISE WARNING 'table "%" is distributed by column "%", not by its id "%": creating a non-unique btree on the id',
			tblname, dist, id_column
			USING DETAIL = 'Nothing keeps an id from being on two shards: queued upserts and ft.merge update or delete every row with a matched id, and two sessions inserting a new id at once both insert it.',
				HINT = 'Distribute the table by its id column to get a unique id.';
		EXECUTE format('CREATE INDEX ON %s (%I)', qual, id_column);
		RETURN;
	END IF;

	BEGIN
		EXECUTE format('CREATE UNIQUE INDEX ON %s (%I)', qual, id_column);
	EXCEPTION
		WHEN unique_violation THEN
			RAISE WARNING 'ids in column "%" of "%" repeat: creating a non-unique btree on it',
				id_column, tblname;
			EXECUTE format('CREATE INDEX ON %s (%I)', qual, id_column);
		WHEN feature_not_supported THEN
			-- a partitioned table whose partition key is not (only) the id
			GET STACKED DIAGNOSTICS err = MESSAGE_TEXT;
			RAISE WARNING 'id column "%" is not the partition key of "%": creating a non-unique btree on it',
				id_column, tblname
				USING DETAIL = format('A unique index cannot be built (%s).  Nothing keeps an id from being in two partitions: queued upserts and ft.merge update or delete every row with a matched id, and two sessions inserting a new id at once both insert it.', err),
					HINT = 'Partition the table by its id column to get a unique id.';
			EXECUTE format('CREATE INDEX ON %s (%I)', qual, id_column);
	END;
END
$$;

/*
 * Citus (README, "Scaling out").  Nothing here needs Citus: each function
 * looks at Citus's catalogs only when the citus extension is installed,
 * through dynamic SQL.
 */

/*
 * ft._citus_kind(tbl): 'h' for a Citus hash-distributed table, 'r' for a
 * Citus reference table, NULL for everything else (and when citus is not
 * installed).  Citus local tables are NULL: their rows are on this node.
 */
CREATE FUNCTION ft._citus_kind(tbl regclass) RETURNS "char"
	LANGUAGE plpgsql STABLE
	SET search_path = pg_catalog, pg_temp
	AS $$
DECLARE
	kind "char";
BEGIN
	IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
		RETURN NULL;
	END IF;
	EXECUTE 'SELECT CASE WHEN p.partmethod OPERATOR(pg_catalog.=) ''h'' THEN ''h'' '
			'WHEN p.repmodel OPERATOR(pg_catalog.=) ''t'' THEN ''r'' END '
			'FROM pg_catalog.pg_dist_partition p '
			'WHERE p.logicalrelid OPERATOR(pg_catalog.=) $1'
		INTO kind USING tbl;
	RETURN kind;
END
$$;

/*
 * ft._citus_distribution_column(tbl): the distribution column of a Citus
 * hash-distributed table, NULL for any other table.
 */
CREATE FUNCTION ft._citus_distribution_column(tbl regclass) RETURNS text
	LANGUAGE plpgsql STABLE
	SET search_path = pg_catalog, pg_temp
	AS $$
DECLARE
	col text;
BEGIN
	IF ft._citus_kind(tbl) IS DISTINCT FROM 'h' THEN
		RETURN NULL;
	END IF;
	EXECUTE 'SELECT pg_catalog.column_to_column_name(p.logicalrelid, p.partkey) '
			'FROM pg_catalog.pg_dist_partition p '
			'WHERE p.logicalrelid OPERATOR(pg_catalog.=) $1'
		INTO col USING tbl;
	RETURN col;
END
$$;

/*
 * ft._shard_index(shard, index_name): on a node holding shard (a shard
 * table of a Citus table), the shard's copy of the segvec index
 * index_name: Citus names it <index_name>_<shard id>.  Internal, called
 * through run_command_on_shards.
 */
CREATE FUNCTION ft._shard_index(shard regclass, index_name text)
	RETURNS regclass
	LANGUAGE plpgsql STABLE
	SET search_path = pg_catalog, pg_temp
	AS $$
DECLARE
	found regclass;
	suffix text;
BEGIN
	-- from pg_index and the index definitions only: Citus hides shards
	-- from queries of pg_class by some clients
	suffix := substring(shard::text from '_[0-9]+$');
	SELECT i.indexrelid::regclass INTO found
	FROM pg_index i
	WHERE i.indrelid = shard
		AND pg_get_indexdef(i.indexrelid) LIKE '% USING segvec %'
	ORDER BY pg_get_indexdef(i.indexrelid)
			LIKE 'CREATE INDEX ' || quote_ident(index_name || suffix) || ' ON %' DESC,
		i.indexrelid
	LIMIT 1;
	IF found IS NULL THEN
		RAISE EXCEPTION 'shard "%" has no segvec index "%"', shard, index_name || coalesce(suffix, '')
			USING ERRCODE = 'undefined_object';
	END IF;
	RETURN found;
END
$$;

/*
 * ft._citus_fanout(index, call, placements): run call, an ft function
 * call with %s where the shard's index goes, on every shard of the Citus
 * table of index (with placements, on every placement: each copy of a
 * reference table), through run_command_on_shards or
 * run_command_on_placements; one row per shard (or placement) with the
 * rows of the call as a jsonb array.  Errors if a shard fails.  Internal:
 * the ft functions combine the rows (src/ft/ftpart.c).
 */
CREATE FUNCTION ft._citus_fanout(index regclass, call text,
	placements boolean DEFAULT false)
	RETURNS TABLE (shard text, result jsonb)
	LANGUAGE plpgsql VOLATILE
	SET search_path = pg_catalog, pg_temp
	AS $$
DECLARE
	tbl regclass;
	idxname text;
	cmd text;
	r record;
BEGIN
	SELECT i.indrelid::regclass, c.relname INTO tbl, idxname
	FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	WHERE i.indexrelid = index;
	-- Citus puts the shard's name where the command says %s
	cmd := format('SELECT COALESCE(pg_catalog.json_agg(pg_catalog.to_json(f)), ''[]''::pg_catalog.json)::pg_catalog.text FROM %s f',
		replace(call, '%s', format('ft._shard_index(''%%s''::pg_catalog.regclass, %L)', idxname)));
	FOR r IN EXECUTE format(
		'SELECT %s AS shard, p.success, p.result FROM pg_catalog.%s($1, $2) p ORDER BY 1',
		CASE WHEN placements THEN 'p.nodename || '':'' || p.nodeport || ''/'' || p.shardid'
			ELSE 'p.shardid::pg_catalog.text' END,
		CASE WHEN placements THEN 'run_command_on_placements'
			ELSE 'run_command_on_shards' END)
		USING tbl, cmd
	LOOP
		IF NOT r.success THEN
			RAISE EXCEPTION 'could not run % on shard %',
				replace(call, '%s', index::pg_catalog.text), r.shard
				USING DETAIL = r.result,
				HINT = 'Every node must be able to connect to every node, itself included (citus.node_conninfo, pg_hba.conf).';
		END IF;
		shard := r.shard;
		result := r.result::jsonb;
		RETURN NEXT;
	END LOOP;
END
$$;
