# report_lib.sh: sourced by report_cli.sh and report_browser.sh.
#
# report_setup NAME ARGS...: ARGS are the test's "PENUMBRA_BINARY SOURCE_DIR [...]"; sets bin,
# src (absolute) and tmp (a temporary directory removed at exit), or exits 2 with the usage.
# verdict NAME STATUS: prints "ok   NAME" (STATUS 0) or "FAIL NAME" and counts it in failed.
#
# make_inputs BIN SRC DIR
# writes into DIR what `penumbra report` draws: compare.json (ex.yaml under fpw, nofpw,
# umbra), check.json (three small mutant scenarios with --coverage), a trace of one of them
# (trace.yaml) and its `replay --json` (replay.json). Returns non-zero when any step fails.
make_inputs() {
	local bin=$1 src=$2 dir=$3 m=$2/scenarios/mutants
	"$bin" compare "$src/docs/examples/ex.yaml" --modes fpw,nofpw,umbra \
		--json "$dir/compare.json" >/dev/null || return 1
	"$bin" check "$m/no-delay-chkpt.yaml" "$m/fpw-off.yaml" "$m/aio-late-bind-control.yaml" \
		--coverage --quiet --json "$dir/check.json" --traces "$dir/traces" >/dev/null 2>&1 || return 1
	cp "$dir/traces/no-delay-chkpt.trace.yaml" "$dir/trace.yaml" || return 1
	"$bin" replay "$dir/trace.yaml" --json "$dir/replay.json" >/dev/null
	[[ $? -eq 1 ]] # the violation reproduces
}

# report_chromium: sets chromium (Debian's, scripts/deps.sh) or prints FAIL and exits 1: the
# browser tests fail, never skip, without it.
report_chromium() {
	chromium=$(command -v chromium || command -v chromium-browser)
	if [[ -z $chromium ]]; then
		echo "FAIL chromium is not installed (scripts/deps.sh installs Debian's chromium)"
		exit 1
	fi
}

# chrome ARGS...: headless Chromium, its own log on stderr
chrome() {
	timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--no-first-run --enable-logging=stderr --v=0 --virtual-time-budget=3000 "$@"
}

# with_probe PAGE SCRIPT OUT: OUT is PAGE with SCRIPT first in its head (run before the page's)
with_probe() {
	{ sed -n '1,/<head>/p' "$1"; printf '%s\n' "$2"; sed '1,/<head>/d' "$1"; } >"$3"
}

report_setup() {
	local name=$1
	shift
	if [[ $# -lt 2 ]]; then
		echo "usage: $name PENUMBRA_BINARY SOURCE_DIR [...]" >&2
		exit 2
	fi
	bin=$(realpath "$1")
	src=$(realpath "$2")
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_report.XXXXXX") || exit 2
	trap 'rm -rf "$tmp"' EXIT
	failed=0
}

verdict() {
	if [[ $2 -eq 0 ]]; then
		echo "ok   $1"
	else
		echo "FAIL $1"
		failed=$((failed + 1))
	fi
}
