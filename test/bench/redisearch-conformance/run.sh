#!/bin/sh
# Runs the RediSearch conformance measurement (conformance.sql) in a fresh
# database of the cluster psql reaches (PG* variables), with segvec
# installed; prints each case that does not pass and the pass rates.
set -e
cd "$(dirname "$0")"
db=${RS_DB:-segvec_rs_conformance}
dropdb --if-exists "$db"
createdb "$db"
psql -X -q -v ON_ERROR_STOP=1 ${RS_ERRORS:+-v RS_ERRORS=1} -d "$db" -f conformance.sql
dropdb "$db"
