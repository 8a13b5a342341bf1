/* segvec--0.1.0--0.2.0.sql: update an installed segvec 0.1.0 to 0.2.0 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION segvec UPDATE TO '0.2.0'" to load this file. \quit

-- 0.2.0: the distance kernels are selectable (segvec.kernel) and named
CREATE FUNCTION segvec_kernel() RETURNS text
	AS 'MODULE_PATHNAME', 'segvec_kernel_name'
	LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION segvec_kernel() IS 'the distance kernels in use (setting segvec.kernel): scalar, avx2 or avx512';
