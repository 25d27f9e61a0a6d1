# pg_lib.sh: sourced by the tests that run real PostgreSQL 15 (postgres.sh, fidelity_import.sh,
# fidelity_model.sh): where its programs are, a work folder that the server's user may write,
# and how to run a program as that user. PostgreSQL not found is a failure, not a skip: CI
# installs it (scripts/deps.sh).
#
#   pg_lib_init NAME   checks $pgbin's programs, sets $work (a new temporary folder, owned by
#                      the postgres system user when run as root, since PostgreSQL refuses to
#                      run as root) and as_pg (the prefix that runs a program as that user)
#   pg PROGRAM ARGS    runs PROGRAM as the cluster's user
pgbin=${PN_PGBIN:-/usr/lib/postgresql/15/bin}

pg_lib_init() {
	local name=$1 t
	for t in initdb pg_ctl pgbench psql pg_waldump; do
		if [[ ! -x $pgbin/$t ]]; then
			echo "$name: $pgbin/$t not found: install postgresql-15 (scripts/deps.sh)" >&2
			exit 1
		fi
	done
	work=$(mktemp -d "${TMPDIR:-/tmp}/pn_pg.XXXXXX")
	as_pg=()
	if [[ $(id -u) -eq 0 ]]; then
		if ! id postgres >/dev/null 2>&1; then
			echo "$name: running as root and there is no postgres user to run the cluster" >&2
			exit 1
		fi
		as_pg=(runuser -u postgres --)
		chown postgres "$work"
	fi
}

pg() { "${as_pg[@]}" "$@"; }
