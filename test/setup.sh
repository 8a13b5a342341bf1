#!/usr/bin/env bash
# setup.sh: install, as root, the Debian packages that building and testing
# segvec need.  Idempotent: when every package is already installed it only
# asks dpkg and returns; apt-get update runs only when something is missing.
#
# The PostgreSQL version: SEGVEC_PG_VERSION if set; else the one whose
# pg_config is installed (the newest, as Debian's pg_config wrapper picks);
# else the release's default (what its "postgresql" package depends on:
# 15 on Debian 12, 17 on Debian 13).
#
# The packages' own maintainer scripts may create (and start) Debian's
# default "N main" cluster; nothing in test/ uses it: tests run in
# throwaway clusters made by pg_virtualenv or by the TAP framework.
set -euo pipefail

updated=
default_version() {
	apt-cache depends postgresql 2>/dev/null |
		sed -n 's/^ *Depends: postgresql-\([0-9][0-9]*\)$/\1/p' | head -1
}
v=${SEGVEC_PG_VERSION:-}
if [ -z "$v" ] && command -v pg_config >/dev/null; then
	v=$(pg_config --version 2>/dev/null | sed -n 's/^PostgreSQL \([0-9][0-9]*\).*/\1/p')
fi
if [ -z "$v" ]; then
	v=$(default_version)
	if [ -z "$v" ] && [ "$(id -u)" = 0 ]; then
		apt-get update -q
		updated=1
		v=$(default_version)
	fi
	if [ -z "$v" ]; then
		echo "setup.sh: cannot tell which PostgreSQL to install; set SEGVEC_PG_VERSION" >&2
		exit 1
	fi
fi

packages=(
	postgresql-$v            # server, contrib modules (auto_explain), pgbench
	postgresql-server-dev-$v # pg_config, PGXS, pg_regress, TAP test modules
	libxxhash-dev            # XXH3 for key hashes and checksums
	libipc-run-perl          # needed by PostgreSQL::Test::Cluster
	dataset-fashion-mnist    # demo, recall and benchmark data
	make
	gcc
	perl                     # prove
	python3                  # test/fmnist.py
)

installed() {
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

missing=()
for p in "${packages[@]}"; do
	installed "$p" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "setup.sh: missing packages: ${missing[*]}; run as root to install them" >&2
	exit 1
fi

echo "setup.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
[ -n "$updated" ] || apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
