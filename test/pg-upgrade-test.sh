#!/usr/bin/env bash
# pg-upgrade-test.sh NEW: pg_upgrade, and dump and restore, of a cluster
# with a segvec index from PostgreSQL 15 (the machine's own) to NEW (17 or
# 18), as root.
#
# In the Debian tree that has NEW (test/pg-tree.sh): the machine's 15
# installation is copied beside NEW's (with the few libraries of the
# machine that the tree lacks), segvec is built for each, a 15 cluster gets
# an index with a graph segment, mutable docs and deleted rows, and NEW's
# pg_upgrade takes it over (the index's files are copied as they are).  The
# upgraded index must answer the same queries with the same rows, pass
# ft.verify, take inserts and a compaction and then answer exactly.  A dump
# of the 15 cluster (by NEW's pg_dump) restored into a fresh NEW cluster
# builds the index anew, which must answer exactly.  Ends with "pg_upgrade
# test: ok".
#
# To 18 it fails before segvec matters, on any table: PostgreSQL 15.20
# gives every column an attribute option pg_attver that Debian sid's 18.6,
# an older minor release, does not know (17.12 does).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
new=${1:?usage: pg-upgrade-test.sh NEW (17 or 18)}

if [ "$(id -u)" != 0 ]; then
	echo "pg-upgrade-test.sh: run as root" >&2
	exit 1
fi
bash "$here/test/setup.sh"
old=$(pg_config --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
root=$(bash "$here/test/pg-tree.sh" "$new")
w=$(mktemp -d "$root/tmp/segvec-upgrade.XXXXXX")
trap 'rm -rf "$w"' EXIT
tw=${w#"$root"}				# the same directory, seen from the tree

# --- PostgreSQL old, copied into the tree, and segvec built for it ------------
libdir=$(cd "$(pg_config --bindir)/.." && pwd)	# /usr/lib/postgresql/15
sharedir=$(pg_config --sharedir)
mkdir -p "$w/old$(dirname "$libdir")" "$w/old$(dirname "$sharedir")" \
	"$w/old/usr/include" "$w/oldlibs" "$w/src"
cp -a "$libdir" "$w/old$(dirname "$libdir")/"
cp -a "$sharedir" "$w/old$(dirname "$sharedir")/"
ln -s /usr/include/postgresql "$w/old/usr/include/postgresql"
tar -C "$here" --exclude=./.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
	--exclude='./sql/segvec--*.sql' -cf - . | tar -C "$w/src" -xf -
echo "=== segvec for PostgreSQL $old"
make -C "$w/src" -s -j"$(nproc)" PG_CONFIG="$w/old$libdir/bin/pg_config" >"$w/build-old.log" 2>&1 &&
	make -C "$w/src" -s install PG_CONFIG="$w/old$libdir/bin/pg_config" >>"$w/build-old.log" 2>&1 || {
	tail -n 30 "$w/build-old.log"
	exit 1
}
make -C "$w/src" -s clean PG_CONFIG="$w/old$libdir/bin/pg_config" >/dev/null 2>&1
rm -f "$w/old/usr/include/postgresql"
# the libraries old's programs need that the tree does not have
for f in "$w/old$libdir"/bin/* "$w/old$libdir"/lib/*.so; do
	ldd "$f" 2>/dev/null | awk '/=> \// { print $1, $3 }'
done | sort -u | while read -r so path; do
	[ -n "$(chroot "$root" /sbin/ldconfig -p | awk -v so="$so" '$1 == so')" ] ||
		cp -L "$path" "$w/oldlibs/"
done

# --- PostgreSQL new, in a private copy in the tree, and segvec built for it ---
mkdir -p "$w/new/usr/lib/postgresql" "$w/new/usr/share/postgresql" "$w/new/usr/include"
cp -a "$root/usr/lib/postgresql/$new" "$w/new/usr/lib/postgresql/"
cp -a "$root/usr/share/postgresql/$new" "$w/new/usr/share/postgresql/"
ln -s /usr/include/postgresql "$w/new/usr/include/postgresql"
echo "=== segvec for PostgreSQL $new"
chroot "$root" sh -c "make -C $tw/src -s -j$(nproc) PG_CONFIG=$tw/new/usr/lib/postgresql/$new/bin/pg_config &&
	make -C $tw/src -s install PG_CONFIG=$tw/new/usr/lib/postgresql/$new/bin/pg_config" \
	>"$w/build-new.log" 2>&1 || {
	tail -n 30 "$w/build-new.log"
	exit 1
}

# --- the upgrade, as postgres in the tree -------------------------------------
cat >"$w/upgrade.sh" <<'SH'
set -euo pipefail
w=$1 old=$2 new=$3
OLD=$w/old/usr/lib/postgresql/$old/bin
NEW=$w/new/usr/lib/postgresql/$new/bin
cd "$w"
conf() {
	cat >>"$1/postgresql.conf" <<CONF
shared_preload_libraries = 'segvec'
unix_socket_directories = '$w'
listen_addresses = ''
port = $2
autovacuum = off
CONF
}
fail() {
	echo "pg-upgrade-test.sh: $*" >&2
	exit 1
}
# old's programs with the libraries the tree lacks
LD_LIBRARY_PATH=$w/oldlibs "$OLD/initdb" -A trust -U postgres --locale=C.UTF-8 -D d-old >/dev/null
conf d-old 5491
LD_LIBRARY_PATH=$w/oldlibs "$OLD/pg_ctl" -w -D d-old -l log-old start >/dev/null
pold() { LD_LIBRARY_PATH=$w/oldlibs "$OLD/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$w" -p 5491 -d postgres "$@"; }
pnew() { "$NEW/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$w" -p 5492 -d postgres "$@"; }
pold <<'SQL'
CREATE EXTENSION segvec;
CREATE FUNCTION vec(i int) RETURNS real[] LANGUAGE sql IMMUTABLE AS
  $$ SELECT array_agg(sin(i * sqrt(j + 1::float8) + j)::real ORDER BY j)
     FROM generate_series(1, 8) j $$;
CREATE TABLE items (id int PRIMARY KEY, e real[]);
INSERT INTO items SELECT i, vec(i) FROM generate_series(1, 6000) i;
CREATE INDEX items_idx ON items USING segvec (e) WITH (compact_threshold = 1000);
INSERT INTO items SELECT i, vec(i) FROM generate_series(6001, 6500) i;
DELETE FROM items WHERE id % 17 = 0;
SQL
info="SELECT num_segments, mutable_docs, immutable_docs FROM ft.info('items_idx')"
knn="SELECT q, array(SELECT id FROM items ORDER BY e <-> vec(100000 + q) LIMIT 10)
     FROM generate_series(1, 20) q"
echo "$old: segments, mutable docs, immutable docs: $(pold -c "$info")"
pold -c "SET enable_seqscan = off" -c "$knn" >knn-old
pold -c "SET enable_indexscan = off" -c "$knn" >exact-old
cmp -s knn-old exact-old || fail "$old: the index answers differ from the exact ones"
# a dump by new's pg_dump, for the restore below
LD_LIBRARY_PATH=$w/oldlibs "$NEW/pg_dump" -Fc -h "$w" -p 5491 -d postgres -f dump.custom
LD_LIBRARY_PATH=$w/oldlibs "$OLD/pg_ctl" -w -D d-old stop >/dev/null

# pg_upgrade wants the clusters' checksum settings equal: 18's initdb
# enables them by default, 15's did not
checksums=()
"$NEW/initdb" --help | grep -q -- --no-data-checksums && checksums=(--no-data-checksums)
"$NEW/initdb" -A trust -U postgres --locale=C.UTF-8 "${checksums[@]}" -D d-new >/dev/null
conf d-new 5492
echo "=== pg_upgrade $old -> $new"
LD_LIBRARY_PATH=$w/oldlibs "$NEW/pg_upgrade" -b "$OLD" -B "$NEW" -d d-old -D d-new \
	-p 5491 -P 5492 -s "$w" >upgrade.out 2>&1 || {
	cat upgrade.out
	grep -h -B 10 -A 3 -E 'ERROR|FATAL' d-new/pg_upgrade_output.d/*/log/* 2>/dev/null | tail -n 60
	fail "pg_upgrade failed"
}
"$NEW/pg_ctl" -w -D d-new -l log-new start >/dev/null
echo "$new: segments, mutable docs, immutable docs: $(pnew -c "$info")"
[ "$(pnew -c "SET enable_seqscan = off" -c "EXPLAIN (COSTS OFF) $knn" |
	grep -c 'Index Scan using items_idx')" -ge 1 ] || fail "$new: the plan does not use the index"
pnew -c "SET enable_seqscan = off" -c "$knn" >knn-new
cmp -s knn-new knn-old || fail "$new: the upgraded index answers differ from $old's"
echo "$new: the upgraded index gives $old's answers"
v=$(pnew -c "SELECT missing_docs, duplicate_docs, docs_in_two_segments, search_misses,
	unreachable_nodes FROM ft.verify('items_idx')")
[ "$v" = "0|0|0|0|0" ] || fail "$new: ft.verify found $v (missing, duplicate, in two segments, search misses, unreachable)"
echo "$new: ft.verify clean"
pnew -c "INSERT INTO items SELECT i, vec(i) FROM generate_series(6501, 8000) i" \
	-c "VACUUM items" -c "SELECT ft.compact('items_idx')" >/dev/null
pnew -c "SET enable_seqscan = off" -c "$knn" >knn-new2
pnew -c "SET enable_indexscan = off" -c "$knn" >exact-new2
cmp -s knn-new2 exact-new2 || fail "$new: after inserts and a compaction the answers differ from the exact ones"
echo "$new: after inserts, VACUUM and a compaction: $(pnew -c "$info"), exact answers"
"$NEW/pg_ctl" -w -D d-new stop >/dev/null

echo "=== pg_dump from $old, pg_restore into $new"
"$NEW/initdb" -A trust -U postgres --locale=C.UTF-8 -D d-restore >/dev/null
conf d-restore 5493
"$NEW/pg_ctl" -w -D d-restore -l log-restore start >/dev/null
prest() { "$NEW/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$w" -p 5493 -d postgres "$@"; }
"$NEW/pg_restore" --exit-on-error -h "$w" -p 5493 -d postgres dump.custom
prest -c "SET enable_seqscan = off" -c "$knn" >knn-restore
cmp -s knn-restore exact-old || fail "$new: the restored index (built by the restore) answers differ from the exact ones"
echo "$new: the restored index, built anew: $(prest -c "$info"), exact answers"
"$NEW/pg_ctl" -w -D d-restore stop >/dev/null
SH
chroot "$root" chown -R postgres:postgres "$tw"
bash "$here/test/pg-tree.sh" "$new" -- runuser -u postgres -- \
	bash "$tw/upgrade.sh" "$tw" "$old" "$new"
echo "pg_upgrade test: ok"
