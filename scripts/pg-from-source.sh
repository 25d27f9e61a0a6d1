#!/usr/bin/env bash
# PostgreSQL 15 built from source, for `penumbra pgcrash --pg-bindir` (docs/pgcrash.md):
# the same path an Umbra author's patched tree takes, shown on Debian's own source package.
# usage: scripts/pg-from-source.sh [PREFIX_PARENT]   (default: build/pg15)
#   PREFIX_PARENT/src     the source tree (apt-get source postgresql-15, Debian's patches applied)
#   PREFIX_PARENT/prefix  the installed build; its bin/ is what --pg-bindir takes
#   PREFIX_PARENT/build.log  configure's and make's output
# Env: PG_SRC=DIR builds an existing source tree instead (an Umbra checkout): no download.
#      JOBS=N make's -j (default 2).
# Getting the source: deb-src for bookworm in a sources file of this script's own
# (/etc/apt/sources.list.d/penumbra-deb-src.sources, written once), then `apt-get update` and
# `apt-get source`: only the Debian archive is needed. Writing the sources file needs root;
# without root and without that file, the script says so and exits 2.
# The server is minimal: no readline, ICU, zlib, SSL or LLVM, and only the parts pgcrash
# needs are built; it installs what pgcrash runs
# (postgres, initdb, pg_ctl, psql, pgbench, pg_waldump) and the extensions its setup creates
# (amcheck, pg_prewarm). It needs a C compiler, make and perl; the release tarball holds the
# generated parser, so no bison or flex.
# Idempotent: a finished prefix (bin/postgres and both extensions' control files) is left
# alone; a configured tree is not configured again (make then builds what is missing).
set -euo pipefail
top=${1:-build/pg15}
jobs=${JOBS:-2}
mkdir -p "$top"
top=$(cd "$top" && pwd)
prefix=$top/prefix
log=$top/build.log
fail() { echo "pg-from-source: $*" >&2; exit 2; }

if [[ -x $prefix/bin/postgres && -f $prefix/share/postgresql/extension/amcheck.control &&
	-f $prefix/share/postgresql/extension/pg_prewarm.control ]]; then
	echo "$prefix/bin"
	exit 0
fi

for tool in cc make perl; do
	command -v "$tool" >/dev/null || fail "$tool is not installed (apt-get install build-essential perl)"
done

src=${PG_SRC:-}
if [[ -z $src ]]; then
	list=/etc/apt/sources.list.d/penumbra-deb-src.sources
	if [[ ! -f $list ]]; then
		[[ $(id -u) -eq 0 ]] || fail "$list is missing and writing it needs root (it enables deb-src for bookworm)"
		cat >"$list" <<-'EOF'
		Types: deb-src
		URIs: http://deb.debian.org/debian
		Suites: bookworm bookworm-updates
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		EOF
	fi
	command -v dpkg-source >/dev/null || fail "dpkg-source is missing (apt-get install dpkg-dev): apt-get source needs it to unpack"
	mkdir -p "$top/src"
	if ! ls -d "$top"/src/postgresql-15-*/ >/dev/null 2>&1; then
		if [[ $(id -u) -eq 0 ]]; then
			apt-get update -qq -o Dir::Etc::sourcelist="$list" -o Dir::Etc::sourceparts=- \
				-o APT::Get::List-Cleanup=0 >>"$log" 2>&1 ||
				fail "apt-get update of $list failed (see $log)"
		fi
		(cd "$top/src" && apt-get source -qq postgresql-15) >>"$log" 2>&1 ||
			fail "apt-get source postgresql-15 failed (see $log)"
	fi
	src=$(ls -d "$top"/src/postgresql-15-*/ | head -n 1)
fi
[[ -x $src/configure ]] || fail "$src: no configure script (not a PostgreSQL source tree?)"

obj=$top/obj
mkdir -p "$obj"
cd "$obj"
if [[ ! -f config.status ]]; then
	echo "pg-from-source: configuring $src into $prefix (log: $log)" >&2
	"$src/configure" --prefix="$prefix" --without-readline --without-icu --without-zlib \
		--without-openssl --without-llvm >>"$log" 2>&1 || fail "configure failed (see $log)"
fi
# Debian's 50-per-version-dirs.patch sends the server's modules (plpgsql, amcheck...) to
# /usr/lib/postgresql/15/lib, over the installed package's, when the prefix names neither
# pgsql nor postgres: keep them under the prefix (pg_config_paths.h follows, being made from
# this file)
sed -i 's|^override pkglibdir := /usr/lib/postgresql/.*|override pkglibdir := $(libdir)/postgresql|' \
	src/Makefile.global
! grep -q '/usr/lib/postgresql' src/Makefile.global ||
	fail "$obj/src/Makefile.global still installs into /usr/lib/postgresql"
# only what a server and pgcrash need (not ecpg, pg_dump, pg_upgrade...): the server and its
# data (catalog, snowball, time zones, encoding conversions), libpq for the clients, the
# programs, plpgsql (initdb creates it), the two extensions
parts=(src/backend src/backend/utils/mb/conversion_procs src/backend/snowball src/timezone
	src/interfaces/libpq src/bin/initdb src/bin/pg_ctl src/bin/psql src/bin/pgbench
	src/bin/pg_waldump src/pl/plpgsql contrib/amcheck contrib/pg_prewarm)
echo "pg-from-source: building ${parts[*]} with make -j$jobs" >&2
for part in "${parts[@]}"; do
	make -C "$part" -j"$jobs" >>"$log" 2>&1 || fail "make -C $part failed (see $log)"
done
for part in "${parts[@]}"; do
	make -C "$part" install >>"$log" 2>&1 || fail "make -C $part install failed (see $log)"
done
for p in postgres initdb pg_ctl psql pgbench pg_waldump; do
	[[ -x $prefix/bin/$p ]] || fail "$prefix/bin/$p was not installed"
done
echo "$prefix/bin"
