#!/usr/bin/env bash
# run-tests.sh: what "make test" runs.  As root: install missing packages,
# build and install segvec, then, as the postgres user in a copy of the tree:
#
#   1. every pg_regress suite (test/sql/*.sql) against a
#      throwaway pg_virtualenv cluster with shared_preload_libraries=segvec,
#      once per distance kernel path the CPU has (segvec.kernel = scalar,
#      avx2, avx512);
#   2. the pgvector companion's suite (pgvector/sql/segvec_pgvector.sql)
#      when pgvector is installed, else a SKIPPED line;
#   3. every TAP test (test/t/*.pl); they make their own clusters.
#
# Prints regression.diffs and the TAP logs of failed tests, and ends with the
# line "N passed, M failed" (suites per kernel path, TAP files and the
# portability check).  Exits non-zero when
# anything failed.  SEGVEC_KEEP_TMP=1 keeps the copy for a post-mortem.
#
# To run a part of the suite while working on it:
#   SEGVEC_REGRESS="jobs compact"   only these pg_regress suites ("" for none;
#                                   segvec_pgvector is the companion's)
#   SEGVEC_TAP="test/t/011_jobs_compact.pl"   only these TAP files ("" for none)
#   SEGVEC_KERNELS="avx2"           only these kernel paths for pg_regress
#                                   ("best": the widest this CPU has)
#   SEGVEC_PG_PREFIX=/tmp/pg-mine   build, install and test against a private
#                                   copy of the PostgreSQL installation made
#                                   there (once), not the system one, so that
#                                   several checkouts can test at the same
#                                   time; the regression suites then run in
#                                   pg_regress's own temporary instance
#
# SEGVEC_PG=17 (make test PG=17; or 18) runs all of the above against that
# PostgreSQL version instead of the machine's own: in a Debian tree that has
# it and Debian's pgvector package (test/pg-tree.sh makes it once and keeps
# it), chrooted, on a copy of this checkout; the variables above apply
# there as well (SEGVEC_PG_PREFIX a path inside the tree).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

if [ "$(id -u)" != 0 ]; then
	echo "run-tests.sh: run as root (it installs packages and the extension," \
		"then runs the tests as postgres)" >&2
	exit 1
fi

# A fixed, always-present locale so clusters get UTF8 and output is stable.
export LANG=C.UTF-8 LC_ALL=C.UTF-8

passed=0
failed=0
summary() {
	echo "$passed passed, $failed failed"
}

# --- another PostgreSQL version: the same, in a Debian tree that has it -----
if [ -n "${SEGVEC_PG:-}" ] && [ -z "${SEGVEC_IN_TREE:-}" ] &&
	[ "$SEGVEC_PG" != "$(pg_config --version 2>/dev/null | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')" ]; then
	root=$(bash test/pg-tree.sh "$SEGVEC_PG")
	src=$(mktemp -d "$root/tmp/segvec-src.XXXXXX")
	trap 'rm -rf "$src"' EXIT
	mkdir "$src/segvec"
	tar -C "$here" --exclude=./.git --exclude=./results --exclude=./tmp_check \
		--exclude=./test/tmp_check --exclude=./log --exclude=./regression.diffs \
		--exclude=./regression.out --exclude='*.o' --exclude='*.bc' --exclude='*.so' \
		--exclude='./sql/segvec--*.sql' -cf - . | tar -C "$src/segvec" -xf -
	# The previous release's tree (the tree has no git history of this
	# checkout), for the upgrade test
	prev_commit=${SEGVEC_PREV_COMMIT:-$(awk '!/^#/ && NF == 2 { c = $2 } END { print c }' test/upgrade-from)}
	prev_tree=""
	if [ -n "$prev_commit" ] && git -C "$here" rev-parse -q --verify "$prev_commit^{commit}" >/dev/null 2>&1; then
		mkdir "$src/prev-release"
		git -C "$here" archive "$prev_commit" | tar -C "$src/prev-release" -xf -
		prev_tree=${src#"$root"}/prev-release
	fi
	# The tree gets a clean environment, and the variables above that are set
	pass=()
	for v in SEGVEC_REGRESS SEGVEC_TAP SEGVEC_KERNELS SEGVEC_PG_PREFIX SEGVEC_KEEP_TMP \
		SEGVEC_TORTURE_ROUNDS SEGVEC_TORTURE_SEED SEGVEC_PREV_COMMIT; do
		[ -z "${!v+set}" ] || pass+=("$v=${!v}")
	done
	echo "=== PostgreSQL $SEGVEC_PG: in $root"
	set +e
	bash test/pg-tree.sh "$SEGVEC_PG" -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 LC_ALL=C.UTF-8 SEGVEC_IN_TREE=1 SEGVEC_PG="$SEGVEC_PG" \
		SEGVEC_PREV_TREE="$prev_tree" "${pass[@]}" \
		bash "${src#"$root"}/segvec/test/run-tests.sh"
	exit $?
fi

if [ -n "${SEGVEC_IN_TREE:-}" ]; then
	# test/pg-tree.sh installed what the tests need, for this version
	export PG_CONFIG=/usr/lib/postgresql/$SEGVEC_PG/bin/pg_config
else
	bash test/setup.sh
fi
# The server's major version (pg_virtualenv -v)
pg_major=$(${PG_CONFIG:-pg_config} --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')

# SEGVEC_PG_PREFIX: a private installation (test/pg-prefix.sh)
. test/pg-prefix.sh

echo "=== build and install (a test build: test hooks compiled in)"
export SEGVEC_TEST_HOOKS=1
if ! { make -j"$(nproc)" && make install; }; then
	echo "run-tests.sh: build or install failed" >&2
	failed=1
	summary
	exit 1
fi

echo "=== versions: PG_VERSION_NUM only in src/compat.h"
if grep -rln --include='*.[ch]' PG_VERSION_NUM src pgvector | grep -vx src/compat.h; then
	echo "run-tests.sh: the files above test PG_VERSION_NUM; put the difference into src/compat.h" >&2
	failed=$((failed + 1))
else
	passed=$((passed + 1))
fi

echo "=== layout: regression suites in test/sql and test/expected only"
# sql/ holds only the install scripts the build makes; a suite put there
# (or an expected/ directory) would silently not run
stray=$(find sql expected -type f ! -name 'segvec--*.sql' 2>/dev/null || true)
if [ -n "$stray" ]; then
	echo "$stray"
	echo "run-tests.sh: the files above belong in test/sql or test/expected" >&2
	failed=$((failed + 1))
else
	passed=$((passed + 1))
fi

echo "=== portability: no AVX outside the kernels (test/check-portable.sh)"
if bash test/check-portable.sh; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
fi

# The postgres user may not be able to enter the checkout (CI clones under a
# private directory), so run the tests in a copy it owns.
work=$(mktemp -d /tmp/segvec-test.XXXXXX)
cleanup() {
	if [ "${SEGVEC_KEEP_TMP:-}" = 1 ]; then
		echo "run-tests.sh: kept $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
tar -C "$here" --exclude=./.git --exclude=./results --exclude=./tmp_check \
	--exclude=./test/tmp_check --exclude=./log --exclude=./regression.diffs \
	--exclude=./regression.out --exclude='*.o' --exclude='*.bc' \
	-cf - . | tar -C "$work" -xf -
# The previous release's tree, for test/t/050_upgrade.pl (which builds
# it): the commit test/upgrade-from names, archived from git history.
# SEGVEC_PREV_COMMIT overrides; without git history the test skips.
prev_src=""
if [ -n "${SEGVEC_PREV_TREE:-}" ] && [ -e "$SEGVEC_PREV_TREE/segvec.control" ]; then
	cp -a "$SEGVEC_PREV_TREE" "$work/prev-release"
	prev_src="$work/prev-release"
	echo "=== previous release for the upgrade test: $(awk '!/^#/ && NF == 2 { c = $2 } END { print c }' test/upgrade-from)"
fi
prev_commit=${SEGVEC_PREV_COMMIT:-$(awk '!/^#/ && NF == 2 { c = $2 } END { print c }' test/upgrade-from)}
if [ -z "$prev_src" ] && [ -n "$prev_commit" ] && git -C "$here" rev-parse -q --verify "$prev_commit^{commit}" >/dev/null 2>&1; then
	mkdir "$work/prev-release"
	if git -C "$here" archive "$prev_commit" | tar -C "$work/prev-release" -xf -; then
		prev_src="$work/prev-release"
		echo "=== previous release for the upgrade test: $(git -C "$here" log -1 --format='%h %s' "$prev_commit")"
	fi
fi
[ -n "$prev_src" ] || echo "run-tests.sh: no git history of ${prev_commit:-the previous release}; the upgrade test will skip its upgrade part"

chmod 755 "$work"
chown -R postgres:postgres "$work"
cd "$work"

as_postgres() {
	runuser -u postgres -- "$@"
}

# --- pg_regress suites -------------------------------------------------------
suites=()
if [ -n "${SEGVEC_REGRESS+set}" ]; then
	for n in $SEGVEC_REGRESS; do
		[ "$n" = segvec_pgvector ] || suites+=("test/sql/$n.sql")
	done
else
	for f in test/sql/*.sql; do
		[ -e "$f" ] && suites+=("$f")
	done
fi

# The distance kernels: the suites run once per path this CPU has, as every
# path must give the same results (src/kernels/distance.c).
# SEGVEC_KERNELS=best: only the widest path this CPU has (what the server
# picks by default).
if [ -n "${SEGVEC_KERNELS+set}" ] && [ "$SEGVEC_KERNELS" != best ]; then
	kernels=($SEGVEC_KERNELS)
else
	kernels=(scalar)
	if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
		kernels+=(avx2)
	fi
	if grep -qw avx512f /proc/cpuinfo; then
		kernels+=(avx512)
	fi
	if [ "${SEGVEC_KERNELS:-}" = best ]; then
		kernels=("${kernels[-1]}")
	fi
fi

if [ ${#suites[@]} -gt 0 ]; then
	names=()
	for f in "${suites[@]}"; do names+=("$(basename "$f" .sql)"); done
	for kernel in "${kernels[@]}"; do
		echo "=== pg_regress: ${#suites[@]} suite(s), segvec.kernel = $kernel"
		# TAP_TESTS= leaves the TAP tests to the step below, outside this
		# cluster.  When the command fails, pg_virtualenv prints the server
		# log's tail.  The suites check the mutable segment's and the
		# segments' states between statements, which a settle (a
		# background compaction and merge of an index gone quiet) would
		# change at any moment: settling is off here, and tested by TAP.
		set +e
		if [ -n "$pg_prefix" ]; then
			printf "shared_preload_libraries = segvec\nsegvec.kernel = %s\nsegvec.settle_ratio = 0\n" \
				"$kernel" >regress.conf
			as_postgres env PG_CONFIG="$PG_CONFIG" \
				make installcheck TAP_TESTS= REGRESS="${names[*]}" \
				EXTRA_REGRESS_OPTS="--temp-instance=$work/tmp_regress --temp-config=$work/regress.conf" \
				2>&1 | tee regress.out.log
		else
			as_postgres pg_virtualenv -v "$pg_major" -o shared_preload_libraries=segvec \
				-o segvec.kernel="$kernel" -o segvec.settle_ratio=0 \
				make installcheck TAP_TESTS= REGRESS="${names[*]}" 2>&1 |
				tee regress.out.log
		fi
		regress_rc=${PIPESTATUS[0]}
		set -e
		# pg_regress prints "test NAME ... ok" (or FAILED) for each suite
		# (15), or "ok N - NAME" ("not ok N - NAME") from 16 on.
		r_ok=$(grep -cE '^[[:space:]]*(test[[:space:]]+)?[^[:space:]]+[[:space:]]+\.\.\. (ok|failed \(ignored\))|^ok [0-9]+ ' regress.out.log || true)
		r_bad=$(grep -cE '^[[:space:]]*(test[[:space:]]+)?[^[:space:]]+[[:space:]]+\.\.\. FAILED|^not ok [0-9]+ ' regress.out.log || true)
		if [ "$regress_rc" -ne 0 ] && [ "$r_bad" -eq 0 ]; then
			# pg_regress or the cluster broke before judging the suites
			r_bad=$((${#suites[@]} - r_ok))
			[ "$r_bad" -gt 0 ] || r_bad=1
		fi
		passed=$((passed + r_ok))
		failed=$((failed + r_bad))
		if [ "$regress_rc" -ne 0 ] && [ -s regression.diffs ]; then
			echo "=== regression.diffs (segvec.kernel = $kernel)"
			head -n 3000 regression.diffs
		fi
		rm -f regression.diffs
	done
else
	echo "=== pg_regress: no suites"
fi

# --- the pgvector companion --------------------------------------------------
# pgvector/sql/segvec_pgvector.sql needs pgvector, which is not a Debian
# package: it runs when pgvector is installed (and SEGVEC_REGRESS is unset or
# names segvec_pgvector), once, with the default kernel path.
run_companion=1
if [ -n "${SEGVEC_REGRESS+set}" ]; then
	case " $SEGVEC_REGRESS " in
		*" segvec_pgvector "*) ;;
		*) run_companion=0 ;;
	esac
fi
if [ "$run_companion" = 1 ]; then
	vector_control="$(${PG_CONFIG:-pg_config} --sharedir)/extension/vector.control"
	if [ ! -e "$vector_control" ]; then
		echo "=== pg_regress segvec_pgvector: SKIPPED, pgvector is not installed (no $vector_control)"
	else
		echo "=== pg_regress segvec_pgvector (pgvector $(sed -n "s/^default_version = '\(.*\)'/\1/p" "$vector_control"))"
		set +e
		if [ -n "$pg_prefix" ]; then
			printf "shared_preload_libraries = segvec\n" >regress.conf
			as_postgres env PG_CONFIG="$PG_CONFIG" make -C pgvector installcheck \
				EXTRA_REGRESS_OPTS="--temp-instance=$work/tmp_regress --temp-config=$work/regress.conf" \
				2>&1 | tee regress.out.log
		else
			as_postgres pg_virtualenv -v "$pg_major" -o shared_preload_libraries=segvec \
				make -C pgvector installcheck 2>&1 | tee regress.out.log
		fi
		regress_rc=${PIPESTATUS[0]}
		set -e
		if [ "$regress_rc" -eq 0 ]; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			[ -s pgvector/regression.diffs ] && head -n 3000 pgvector/regression.diffs
		fi
		rm -f pgvector/regression.diffs
	fi
fi

# --- TAP tests ---------------------------------------------------------------
taps=()
if [ -n "${SEGVEC_TAP+set}" ]; then
	for f in $SEGVEC_TAP; do taps+=("$f"); done
else
	for f in test/t/*.pl; do
		[ -e "$f" ] && taps+=("$f")
	done
fi

if [ ${#taps[@]} -gt 0 ]; then
	echo "=== TAP: ${#taps[@]} file(s)"
	set +e
	as_postgres env SEGVEC_PREV_SRC="$prev_src" ${PG_CONFIG:+PG_CONFIG="$PG_CONFIG"} \
		make installcheck REGRESS= PROVE_FLAGS=--timer \
		PROVE_TESTS="${taps[*]}" 2>&1 | tee tap.out.log
	tap_rc=${PIPESTATUS[0]}
	set -e
	# A file passed when prove printed "FILE .. ok" for it; one that
	# skipped itself ("FILE .. skipped: why", say 090_citus.pl without
	# Citus) neither passed nor failed; every other file failed, including
	# those a bail-out left unrun.
	tap_failed=()
	tap_skipped=()
	for f in "${taps[@]}"; do
		if grep -qE "^(\[[0-9:]+\] )?$f \.+ ok" tap.out.log; then
			:
		elif grep -qE "^(\[[0-9:]+\] )?$f \.+ skipped:" tap.out.log; then
			tap_skipped+=("$f")
		else
			tap_failed+=("$f")
		fi
	done
	for f in "${tap_skipped[@]}"; do
		echo "=== TAP skipped (neither passed nor failed): $f"
	done
	t_bad=${#tap_failed[@]}
	if [ "$tap_rc" -ne 0 ] && [ "$t_bad" -eq 0 ]; then
		t_bad=1
	fi
	passed=$((passed + ${#taps[@]} - ${#tap_failed[@]} - ${#tap_skipped[@]}))
	failed=$((failed + t_bad))
	for f in "${tap_failed[@]}"; do
		name=$(basename "$f" .pl)
		for log in "tmp_check/log/regress_log_$name" tmp_check/log/"${name}"_*.log; do
			[ -s "$log" ] || continue
			echo "=== $log (last 300 lines)"
			tail -n 300 "$log"
		done
	done
	# the failed assertions last, where a truncated CI log still shows them
	for f in "${tap_failed[@]}"; do
		name=$(basename "$f" .pl)
		log="tmp_check/log/regress_log_$name"
		echo "=== TAP failed: $f"
		[ -s "$log" ] || continue
		grep -E -A 6 '^(not ok |#   Failed test)|Bail out|died|Tests were run but no plan' "$log" |
			head -n 60 || true
	done
else
	echo "=== TAP: no tests"
fi

summary
[ "$failed" -eq 0 ]
