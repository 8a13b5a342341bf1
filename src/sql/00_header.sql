/* segvec--<version>.sql: install script, the parts in src/sql put together */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION segvec" to load this file. \quit

