#!/usr/bin/env bash
# package-test.sh: build the Debian packages and try each in a fresh
# cluster.
#
# As root, on Debian bookworm (or any Debian with postgresql-common):
#   1. installs the build dependencies if missing (debhelper,
#      postgresql-server-dev-all, libxxhash-dev, dpkg-dev, fakeroot);
#   2. runs pg_buildext updatecontrol and dpkg-buildpackage -us -uc in a
#      copy of the tree (so the checkout keeps its build): one package
#      postgresql-N-segvec per PostgreSQL version N of debian/pgversions
#      (15 and later) that the machine's postgresql-common supports; the
#      build also runs test/check-portable.sh on each packaged module;
#   3. unpacks each postgresql-N-segvec (segvec and its pgvector companion,
#      segvec_pgvector, which is only checked for here: pgvector is not a
#      build or test dependency) into a temp directory and, in a
#      throwaway pg_virtualenv cluster that loads the module from there
#      (dynamic_library_path, and extension_destdir, or from 18 on
#      extension_control_path, for the control and SQL files; the stop-word file goes into the server's tsearch_data for the
#      test, as extension_destdir does not cover it, unless one is there),
#      creates the extension, an index, queries it and checks that the
#      backend mapped the packaged module.
#
# SEGVEC_PG=17 (or 18) does all of this in the Debian tree that has that
# version (test/pg-tree.sh), where the package is postgresql-17-segvec.
# SEGVEC_PACKAGE_DPKG=1 installs the package with dpkg -i instead (a CI
# machine of its own; it replaces the installed segvec).  Exits non-zero on
# any failure; ends with "package test: ok".
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [ "$(id -u)" != 0 ]; then
	echo "package-test.sh: run as root" >&2
	exit 1
fi

# SEGVEC_PG=17 (or 18): the same in the Debian tree that has that version
# (test/pg-tree.sh), on a copy of this checkout
if [ -n "${SEGVEC_PG:-}" ] && [ -z "${SEGVEC_IN_TREE:-}" ] &&
	[ "$SEGVEC_PG" != "$(pg_config --version 2>/dev/null | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')" ]; then
	root=$(bash "$here/test/pg-tree.sh" "$SEGVEC_PG")
	src=$(mktemp -d "$root/tmp/segvec-src.XXXXXX")
	trap 'rm -rf "$src"' EXIT
	mkdir "$src/segvec"
	tar -C "$here" --exclude=./.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
		--exclude='./sql/segvec--*.sql' -cf - . | tar -C "$src/segvec" -xf -
	echo "=== PostgreSQL $SEGVEC_PG: in $root"
	set +e
	bash "$here/test/pg-tree.sh" "$SEGVEC_PG" -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 LC_ALL=C.UTF-8 SEGVEC_IN_TREE=1 SEGVEC_PG="$SEGVEC_PG" \
		${SEGVEC_PACKAGE_DPKG:+SEGVEC_PACKAGE_DPKG="$SEGVEC_PACKAGE_DPKG"} \
		bash "${src#"$root"}/segvec/test/package-test.sh"
	exit $?
fi

deps=(debhelper postgresql-server-dev-all libxxhash-dev dpkg-dev fakeroot gcc make)
missing=()
for p in "${deps[@]}"; do
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "package-test.sh: installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"${missing[@]}" </dev/null
fi

version=$(dpkg-parsechangelog -l "$here/debian/changelog" -S Version)
control_version=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$here/segvec.control")
companion_version=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$here/pgvector/segvec_pgvector.control")
meta_version=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["version"])' "$here/META.json")
if [ "$version" != "$control_version" ] || [ "$meta_version" != "$control_version" ] ||
	[ "$companion_version" != "$control_version" ]; then
	echo "package-test.sh: versions differ: segvec.control $control_version," \
		"debian/changelog $version, META.json $meta_version," \
		"pgvector/segvec_pgvector.control $companion_version" >&2
	exit 1
fi
tmp=$(mktemp -d /tmp/segvec-package.XXXXXX)
# stop-word files put into a server's tsearch_data for the smoke test
added_tsearch=()
cleanup() {
	[ ${#added_tsearch[@]} -eq 0 ] || rm -f "${added_tsearch[@]}"
	rm -rf "$tmp"
}
trap cleanup EXIT
chmod 755 "$tmp"

echo "=== dpkg-buildpackage -us -uc (segvec $version)"
mkdir "$tmp/segvec-$version"
tar -C "$here" --exclude=./.git --exclude='*.o' --exclude='*.so' \
	--exclude='*.bc' --exclude=./results --exclude=./tmp_check \
	--exclude=./test/tmp_check --exclude=./log --exclude=./regression.diffs \
	--exclude=./regression.out --exclude=./test/bench/kernels \
	--exclude='./sql/segvec--*.sql' -cf - . | tar -C "$tmp/segvec-$version" -xf -
# debian/control for the PostgreSQL versions this machine has (one package
# each), from debian/control.in and debian/pgversions
(cd "$tmp/segvec-$version" && pg_buildext updatecontrol) > "$tmp/build.log" 2>&1
(cd "$tmp/segvec-$version" && dpkg-buildpackage -us -uc) >> "$tmp/build.log" 2>&1 || {
	tail -n 60 "$tmp/build.log"
	echo "package-test.sh: dpkg-buildpackage failed" >&2
	exit 1
}
grep -E 'check-portable.sh: ' "$tmp/build.log" || true

# one package per PostgreSQL version built for, each tried in a fresh
# cluster of that version
debs=("$tmp"/postgresql-*-segvec_"$version"_*.deb)
[ -e "${debs[0]}" ] || {
	echo "package-test.sh: no postgresql-N-segvec package was built" >&2
	exit 1
}
for deb in "${debs[@]}"; do
	pgver=$(basename "$deb" | sed -E 's/^postgresql-([0-9]+)-segvec_.*/\1/')
	echo "=== built $(basename "$deb")"
	dpkg-deb -c "$deb" | awk '{print $6}' > "$tmp/contents"
	grep -E 'segvec(_pgvector)?(\.so|\.control|--.*\.sql)$' "$tmp/contents"
	for f in lib/segvec.so extension/segvec.control "extension/segvec--$version.sql" \
		lib/segvec_pgvector.so extension/segvec_pgvector.control \
		"extension/segvec_pgvector--$version.sql"; do
		grep -q "/$f\$" "$tmp/contents" || {
			echo "package-test.sh: $f missing from the package" >&2
			exit 1
		}
	done

	pkglibdir=$(/usr/lib/postgresql/"$pgver"/bin/pg_config --pkglibdir)
	if [ "${SEGVEC_PACKAGE_DPKG:-}" = 1 ]; then
		dpkg -i "$deb"
		so="$pkglibdir/segvec.so"
		venv_opts=(-o shared_preload_libraries=segvec)
	else
		dpkg -x "$deb" "$tmp/root"
		so="$tmp/root$pkglibdir/segvec.so"
		# the module by name (shared_preload_libraries, the background
		# workers' library) through dynamic_library_path, the control and SQL
		# files and '$libdir/segvec' through extension_destdir (a setting of
		# Debian's PostgreSQL up to 17) or extension_control_path (18's own,
		# which replaces it): the same file either way
		venv_opts=(-o shared_preload_libraries=segvec
			-o "dynamic_library_path=$tmp/root$pkglibdir:\$libdir")
		if [ "$pgver" -ge 18 ]; then
			sharedir=$(/usr/lib/postgresql/"$pgver"/bin/pg_config --sharedir)
			venv_opts+=(-o "extension_control_path=$tmp/root$sharedir:\$system")
		else
			venv_opts+=(-o "extension_destdir=$tmp/root")
		fi
		# the text search stop words are read from the server's own
		# tsearch_data, which extension_destdir does not cover: the
		# package's file goes there for the test when none is there
		tsdir=$(/usr/lib/postgresql/"$pgver"/bin/pg_config --sharedir)/tsearch_data
		for f in "$tmp/root$tsdir"/*.stop; do
			[ -e "$f" ] && [ ! -e "$tsdir/$(basename "$f")" ] || continue
			cp "$f" "$tsdir/"
			added_tsearch+=("$tsdir/$(basename "$f")")
		done
	fi

	echo "=== a fresh cluster with the package's module"
	cat > "$tmp/smoke.sql" <<'SQL'
\set ON_ERROR_STOP on
CREATE EXTENSION segvec;
SELECT extversion FROM pg_extension WHERE extname = 'segvec' \gset
CREATE TABLE t (id int, e real[]);
INSERT INTO t SELECT i, ARRAY[sin(i), cos(i), i % 7]::real[] FROM generate_series(1, 2000) i;
CREATE INDEX ON t USING segvec (e);
SET enable_seqscan = off;
SELECT string_agg(id::text, ',') AS ids FROM
  (SELECT id FROM t ORDER BY e <-> '{0,1,3}' LIMIT 5) s \gset
RESET enable_seqscan;
SET enable_indexscan = off;
SELECT string_agg(id::text, ',') AS exact FROM
  (SELECT id FROM t ORDER BY e <-> '{0,1,3}', id LIMIT 5) s \gset
SELECT :'ids' = :'exact' AS same_as_exact, :'extversion' AS version,
       segvec_kernel() AS kernel \gset
\echo version :version kernel :kernel same_as_exact :same_as_exact
SELECT :'same_as_exact'::boolean AS ok \gset
\if :ok
\else
\echo index answer :ids differs from :exact
SELECT 1 / 0 AS failed;
\endif
-- the module this backend runs is the packaged one
SELECT position(:'so' IN pg_read_file('/proc/self/maps')) > 0 AS mapped \gset
\if :mapped
\echo the backend mapped :so
\else
\echo the backend did not map :so
SELECT 1 / 0 AS failed;
\endif
SQL
	chmod 644 "$tmp/smoke.sql"
	cat > "$tmp/smoke.sh" <<SH
set -e
psql -X -q -v so="$so" -f "$tmp/smoke.sql" | tee "$tmp/smoke.out"
grep -q "version $version " "$tmp/smoke.out"
grep -q "the backend mapped" "$tmp/smoke.out"
SH
	pg_virtualenv -v "$pgver" "${venv_opts[@]}" bash "$tmp/smoke.sh"
	echo "=== postgresql-$pgver-segvec: ok"
done

echo "package test: ok"
