#!/usr/bin/env bash
# setup.sh: install, as root, the Debian packages that building and testing
# segvec need.  Idempotent: when every package is already installed it only
# asks dpkg and returns; apt-get update runs only when something is missing.
#
# The packages' own maintainer scripts may create (and start) Debian's default
# "15 main" cluster; nothing in test/ uses it: tests run in throwaway clusters
# made by pg_virtualenv or by the TAP framework.
set -euo pipefail

packages=(
	postgresql-15            # server, contrib modules (auto_explain), pgbench
	postgresql-server-dev-15 # pg_config, PGXS, pg_regress, TAP test modules
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
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
