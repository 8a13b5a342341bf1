# segvec: log-structured vector index for PostgreSQL (PGXS build)
#
#   make && make install      build and install into the pg_config found
#                             (segvec and its companion segvec_pgvector,
#                             pgvector/, for pgvector's vector columns)
#   make test                 (as root) install what is missing, build,
#                             install, run every pg_regress suite and TAP test
#   make test PG=17           the same against PostgreSQL 17 (or 18), in a
#                             Debian tree that has it (test/pg-tree.sh, made
#                             once under /var/cache/segvec-pg and kept)
#   make torture ROUNDS=N     (as root) only the randomized torture test, N
#                             rounds (SEED=S repeats a run)
#   make demo                 (as root) load Fashion-MNIST, build an index,
#                             run a few queries and print the figures
#   make demo KEEP=1          the same in a cluster that stays (N/segvec_demo)
#   SEGVEC_PG_PREFIX=DIR make test (or make demo)  the same against a
#                             private copy of the PostgreSQL installation
#                             made in DIR (test/pg-prefix.sh)
#   make bench-kernels        ns per call of each distance kernel path
#   make bench-quant          quantized (rabitq, sq8) graph segments against
#                             unquantized ones and pgvector's HNSW
#   make OPTFLAGS=-march=native  a build for CPUs like this one only (the
#                             default build runs anywhere; the kernels pick
#                             AVX2 or AVX-512 at load time through CPUID)

EXTENSION = segvec
MODULE_big = segvec
# One folder per subsystem under src/ (see src/README.md for the map).
OBJS = $(patsubst %.c,%.o,$(sort $(wildcard src/*.c src/*/*.c)))
# The extension's version: segvec.control's default_version (META.json and
# debian/changelog say the same; test/package-test.sh checks).  The install
# script is put together from src/sql/*.sql, one part per subsystem, in file
# name order; src/sql/updates/ holds the scripts that take an installed
# older version to the next (ALTER EXTENSION segvec UPDATE).  A change to
# src/sql goes into the update script to the current version as well:
# test/t/050_upgrade.pl compares an updated installation with a fresh one.
# An update script is src/sql/updates/segvec--A--B.sql.in with each line
# "-- @include src/sql/PART.sql" replaced by that part (a part new in B), so
# that no SQL is written twice.
EXTVERSION = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" segvec.control)
UPDATE_SCRIPTS = $(patsubst src/sql/updates/%.sql.in,sql/%.sql,$(sort $(wildcard src/sql/updates/segvec--*.sql.in)))
DATA_built = sql/segvec--$(EXTVERSION).sql $(UPDATE_SCRIPTS)
# RediSearch's default stop words, for the text search configuration
# ft.english_redisearch (src/sql/65_ft_dialect.sql)
DATA_TSEARCH = src/sql/segvec_redisearch.stop

# The pg_regress suites: test/sql/NAME.sql, their output test/expected/NAME.out
# (sql/ holds the install scripts the build puts together)
REGRESS = $(patsubst test/sql/%.sql,%,$(sort $(wildcard test/sql/*.sql)))
REGRESS_OPTS = --inputdir=test

TAP_TESTS = 1
PROVE_TESTS = $(sort $(wildcard test/t/*.pl))

# The build uses the distribution's flags (pg_config --cflags), so the module
# runs on any CPU the distribution supports; the distance kernels pick AVX2
# or AVX-512 at load time.  OPTFLAGS=-march=native is an explicit opt-in for
# a module that only runs on CPUs like the build machine's.  -ffp-contract=off
# keeps the compiler from fusing a multiply and an add, which would change
# the kernels' results (src/kernels/distance.c).
OPTFLAGS ?=
PG_CPPFLAGS = -I$(srcdir)/src
PG_CFLAGS = $(OPTFLAGS) -ffp-contract=off -Wall -Wextra -Wno-unused-parameter \
	-Wno-sign-compare -Wno-missing-field-initializers
SHLIB_LINK = -lxxhash

# SEGVEC_TEST_HOOKS=1: a test build, with the test points, the test-only
# settings and SQL functions compiled in (src/hooks/testhooks.h); make test
# builds so.  A change of the setting rebuilds every object.
SEGVEC_TEST_HOOKS ?= 0
ifeq ($(SEGVEC_TEST_HOOKS),1)
PG_CPPFLAGS += -DSEGVEC_TEST_HOOKS
endif
BUILD_FLAGS = src/hooks/.build-flags

EXTRA_CLEAN = test/tmp_check tmp_check test/bench/kernels $(BUILD_FLAGS)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(OBJS): $(wildcard src/*.h src/*/*.h) $(BUILD_FLAGS)

.PHONY: build-flags-check
$(BUILD_FLAGS): build-flags-check
	@echo "SEGVEC_TEST_HOOKS=$(SEGVEC_TEST_HOOKS)" | cmp -s - $@ || \
		echo "SEGVEC_TEST_HOOKS=$(SEGVEC_TEST_HOOKS)" > $@

# The companion extension segvec_pgvector (pgvector/, its own PGXS
# Makefile): segvec indexes on pgvector's vector and halfvec columns.  It is
# built and installed with segvec; it needs pgvector only when created.
.PHONY: companion install-companion clean-companion
all: companion
companion:
	$(MAKE) -C pgvector PG_CONFIG=$(PG_CONFIG)
install: install-companion
install-companion:
	$(MAKE) -C pgvector install PG_CONFIG=$(PG_CONFIG)
clean: clean-companion
clean-companion:
	$(MAKE) -C pgvector clean PG_CONFIG=$(PG_CONFIG)

# sql/ holds only these generated scripts, so a fresh checkout has none
sql/segvec--$(EXTVERSION).sql: $(sort $(wildcard src/sql/*.sql))
	@mkdir -p $(@D)
	cat $^ > $@

sql/segvec--%.sql: src/sql/updates/segvec--%.sql.in $(sort $(wildcard src/sql/*.sql))
	@mkdir -p $(@D)
	awk '/^-- @include / { while ((getline line < $$3) > 0) print line; close($$3); next } { print }' $< > $@

all: sql/segvec--$(EXTVERSION).sql

.PHONY: test torture demo bench bench-kernels bench-quant

test:
	SEGVEC_PG=$(PG) bash test/run-tests.sh

# The randomized torture test alone (test/t/100_torture.pl), ROUNDS rounds
# of concurrent churn and crash restarts (4 in make test); SEED=N repeats
# a run.
ROUNDS ?= 10
torture:
	SEGVEC_REGRESS= SEGVEC_TAP=test/t/100_torture.pl \
	SEGVEC_TORTURE_ROUNDS=$(ROUNDS) $(if $(SEED),SEGVEC_TORTURE_SEED=$(SEED)) \
	bash test/run-tests.sh

demo:
	KEEP=$(KEEP) REPLACE=$(REPLACE) bash test/demo.sh

bench:
	bash test/bench/run.sh

# Quantized graph segments (sq8) against unquantized ones and pgvector:
# recall/QPS sweep, build time, index size and its split.
# BENCH_DATA=synth for 100,000 clustered 1,536-dim vectors.
bench-quant:
	bash test/bench/quant.sh

# Micro benchmark of the distance kernels: ns per call of each path the CPU
# has, and whether all paths return the same bits (test/bench/kernels.c).
KERNEL_SRC = $(firstword $(wildcard src/distance.c src/*/distance.c))

test/bench/kernels: test/bench/kernels.c $(KERNEL_SRC) $(wildcard src/*.h src/*/*.h)
	$(CC) $(CPPFLAGS) $(CFLAGS) -I$(dir $(KERNEL_SRC)) -Isrc -o $@ $< -lm -no-pie \
		-Wl,--unresolved-symbols=ignore-all

bench-kernels: test/bench/kernels
	test/bench/kernels
