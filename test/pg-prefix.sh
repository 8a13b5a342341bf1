# pg-prefix.sh: sourced (as root, after test/setup.sh) by run-tests.sh and
# demo.sh.  With SEGVEC_PG_PREFIX set, a private installation: the system's
# server, client programs, PGXS and extension directories copied under
# SEGVEC_PG_PREFIX (once; PostgreSQL finds its directories relative to its
# programs, so the copy works where it is), and PG_CONFIG exported as its
# pg_config, which the Makefile builds and installs against.  Sets pg_prefix
# to the prefix's absolute path ("" without SEGVEC_PG_PREFIX) and pg_bindir
# to the programs' directory (the system's without it).
pg_prefix=${SEGVEC_PG_PREFIX:-}
pg_bindir=$(pg_config --bindir)
if [ -n "$pg_prefix" ]; then
	pg_prefix=$(mkdir -p "$pg_prefix" && cd "$pg_prefix" && pwd)
	if [ ! -x "$pg_prefix$pg_bindir/postgres" ]; then
		echo "=== private PostgreSQL installation in $pg_prefix"
		for d in "$pg_bindir/.." "$(pg_config --sharedir)"; do
			d=$(cd "$d" && pwd)
			mkdir -p "$pg_prefix$(dirname "$d")"
			cp -a "$d" "$pg_prefix$(dirname "$d")/"
		done
		inc=$(dirname "$(dirname "$(pg_config --includedir-server)")")
		mkdir -p "$pg_prefix$(dirname "$inc")"
		[ -e "$pg_prefix$inc" ] || ln -s "$inc" "$pg_prefix$inc"
		chmod -R a+rX "$pg_prefix"
	fi
	export PG_CONFIG="$pg_prefix$pg_bindir/pg_config"
	pg_bindir=$pg_prefix$pg_bindir
fi
