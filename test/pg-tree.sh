#!/usr/bin/env bash
# pg-tree.sh VERSION: make (once) or reuse a Debian tree that has PostgreSQL
# VERSION, its headers and Debian's pgvector package, and print its path.
# pg-tree.sh VERSION -- COMMAND [ARG...]: the same, then run COMMAND in the
# tree (chroot) with /proc mounted and /dev bound, in a mount namespace of
# its own: the mounts go away with the command, and nothing stays mounted
# under the tree between runs.  As root.  The machines run bookworm, whose archive has PostgreSQL 15 only;
# later Debian suites have the later versions:
#
#   16  trixie's archive does not have it: not offered
#   17  trixie  (postgresql-17, postgresql-17-pgvector)
#   18  sid     (postgresql-18, postgresql-18-pgvector)
#
# The tree is made with debootstrap --variant=minbase from the mirror the
# machine's own apt sources name, under SEGVEC_PG_TREES
# (/var/cache/segvec-pg by default) as SUITE/, and kept between runs: a
# later call only installs what is missing.  The mirror may serve a frozen archive whose Release files
# have expired (sid's do), so apt in the tree does not check Valid-Until.
#
# test/run-tests.sh PG=VERSION runs the tests inside the tree (chroot).
set -euo pipefail

version=${1:?usage: pg-tree.sh VERSION}
case $version in
	17) suite=trixie ;;
	18) suite=sid ;;
	*)
		echo "pg-tree.sh: no Debian suite known for PostgreSQL $version (17 or 18)" >&2
		exit 1
		;;
esac

if [ "$(id -u)" != 0 ]; then
	echo "pg-tree.sh: run as root (debootstrap, chroot)" >&2
	exit 1
fi

trees=${SEGVEC_PG_TREES:-/var/cache/segvec-pg}
root=$trees/$suite

# The machine's Debian mirror (deb.debian.org unless its sources say other).
mirror=${SEGVEC_DEBIAN_MIRROR:-$(
	cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		/etc/apt/sources.list.d/*.sources 2>/dev/null |
		grep -oE 'https?://[^ ]+/debian/?( |$)' | head -n 1 | tr -d ' ' || true
)}
mirror=${mirror:-http://deb.debian.org/debian}

packages=(
	"postgresql-$version"
	"postgresql-server-dev-$version"
	"postgresql-$version-pgvector"
	libxxhash-dev
	make
	gcc
	libipc-run-perl
	perl
	python3
	# test/package-test.sh's build of the Debian package
	build-essential
	debhelper
	dpkg-dev
	fakeroot
	postgresql-server-dev-all
)

if ! command -v debootstrap >/dev/null; then
	echo "=== apt-get install debootstrap" >&2
	DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		debootstrap </dev/null >&2
fi

mkdir -p "$trees"
# One maker at a time per tree: two runs starting together must not both
# debootstrap into the same directory.
exec 9>"$trees/.$suite.lock"
flock 9

if [ ! -e "$root/.segvec-tree-done" ]; then
	if [ ! -x "$root/usr/bin/apt-get" ]; then
		echo "=== debootstrap $suite into $root ($mirror)" >&2
		if grep -q " $root/" /proc/mounts; then
			echo "pg-tree.sh: something is mounted under $root; not removing it" >&2
			exit 1
		fi
		rm -rf "$root"
		debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$trees/$suite.debootstrap.log" 2>&1 || {
			tail -n 30 "$trees/$suite.debootstrap.log" >&2
			echo "pg-tree.sh: debootstrap $suite failed" >&2
			exit 1
		}
	fi
	echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/99segvec-no-valid-until"
	# No cluster is needed from the packages: tests make their own.
	mkdir -p "$root/etc/postgresql-common/createcluster.d"
	echo "create_main_cluster = false" >"$root/etc/postgresql-common/createcluster.d/segvec.conf"
	# Daemons must not start inside the tree.
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"
fi

# in_tree CMD...: CMD in the tree, with /proc and /dev, in a private mount
# namespace
in_tree() {
	unshare --mount --propagation private -- /bin/sh -ec '
		root=$1
		shift
		mount -t proc proc "$root/proc"
		mount --rbind /dev "$root/dev"
		exec chroot "$root" "$@"
	' in_tree "$root" "$@"
}

missing=()
for p in "${packages[@]}"; do
	[ "$(in_tree dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "=== $suite: apt-get install ${missing[*]}" >&2
	{
		in_tree env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
			in_tree env DEBIAN_FRONTEND=noninteractive \
				apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
	} >"$trees/$suite.apt.log" 2>&1 || {
		tail -n 30 "$trees/$suite.apt.log" >&2
		echo "pg-tree.sh: installing ${missing[*]} in $root failed" >&2
		exit 1
	}
	in_tree apt-get clean
fi
touch "$root/.segvec-tree-done"
# Later runs may share the tree; this one is done changing it.
flock -u 9
exec 9>&-

if [ "${2:-}" = -- ]; then
	shift 2
	in_tree "$@"
else
	echo "$root"
fi
