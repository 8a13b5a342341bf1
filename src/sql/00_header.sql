/* segvec--0.1.0.sql: install script */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION segvec" to load this file. \quit

