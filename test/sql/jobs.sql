-- Background work: the SQL surface of the job table and its errors.  The
-- output does not depend on whether segvec is preloaded (the TAP tests
-- test/t/010-013 cover the workers themselves).
-- quietly: an earlier suite may have created it
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS segvec;
RESET client_min_messages;
-- a schema of its own, so no other suite's tables or functions collide
CREATE SCHEMA segvec_jobs;
SET search_path = segvec_jobs, public;
\set VERBOSITY terse

CREATE TABLE jt (id int PRIMARY KEY, embedding real[]);
CREATE INDEX jt_idx ON jt USING segvec (embedding);

-- the view's and functions' columns
SELECT * FROM ft.jobs WHERE false;
SELECT kind FROM ft.job_stats() ORDER BY kind;
SELECT role, state FROM ft.job_workers() WHERE false;
SELECT pg_typeof(ft.background_enabled());

-- ft.submit_job: errors
SELECT ft.submit_job('jt_idx', 'vacuum');
SELECT ft.submit_job('jt_pkey');
SELECT ft.submit_job('jt');
SELECT ft.submit_job(NULL);
CREATE TEMP TABLE jt_tmp (id int PRIMARY KEY, embedding real[]);
CREATE INDEX jt_tmp_idx ON jt_tmp USING segvec (embedding);
SELECT ft.submit_job('jt_tmp_idx');

-- only the owner of the table may submit
CREATE ROLE segvec_jobs_other;
GRANT USAGE ON SCHEMA segvec_jobs TO segvec_jobs_other;
SET ROLE segvec_jobs_other;
SELECT ft.submit_job('jt_idx');
RESET ROLE;

DROP SCHEMA segvec_jobs CASCADE;
DROP ROLE segvec_jobs_other;

-- anyone may read ft.jobs, as anyone may call ft.job_table
CREATE ROLE regress_jobs_reader;
SET ROLE regress_jobs_reader;
SELECT count(*) >= 0 AS readable FROM ft.jobs;
RESET ROLE;
DROP ROLE regress_jobs_reader;

-- DROP DATABASE waits until every process has closed the database's files
-- (a ProcSignalBarrier): the launcher takes part, so it returns (the
-- timeout turns a wait that never ends into an error)
CREATE DATABASE regress_jobs_dropdb;
SET statement_timeout = '3min';
DROP DATABASE regress_jobs_dropdb;
RESET statement_timeout;
