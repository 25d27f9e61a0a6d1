#!/usr/bin/env bash
# doc-tables.sh: the examples in the docs, printed by the binary itself, so that they cannot
# go stale (CTest doc_tables runs it with --check).
#
# Usage: scripts/doc-tables.sh [--check] PENUMBRA_BINARY [FILE.md...]
#        (default files: README.md and docs/*.md of the repository)
#
# A generated block is written between two markers, and everything between them is replaced:
#
#   <!-- penumbra: ARGS -->         a fenced block: "$ penumbra ARGS", then what the command
#   <!-- end -->                    prints (stdout and stderr, as a terminal shows them);
#                                   "ARGS1 ;; ARGS2" shows two commands, one after the other
#   <!-- penumbra[LANG]: ARGS -->   a fenced block of language LANG with the output only
#   <!-- end -->                    (for `--json - 2>/dev/null`)
#   <!-- penumbra[md]: ARGS -->     the output as it is, Markdown (for `help --markdown CMD`,
#   <!-- end -->                    a command's usage and option table)
#   <!-- file: NAME -->             a fenced yaml block holding docs/examples/NAME
#   <!-- end -->
#
# ARGS is read by sh in docs/examples/ (so `>/dev/null` and `2>/dev/null` work, and paths
# print as short names), with `penumbra` being PENUMBRA_BINARY. Only deterministic output
# belongs in a block: run, compare, check, replay, errors; never bench timings.
#
# Without --check the files are rewritten in place. With --check nothing is written: it
# prints a diff for each file that differs and exits 1 (0 when all are current; 2 on bad
# usage or a malformed marker).
set -u

check=false
if [[ ${1:-} == --check ]]; then
	check=true
	shift
fi
if [[ $# -lt 1 ]]; then
	echo "usage: $0 [--check] PENUMBRA_BINARY [FILE.md...]" >&2
	exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shift
if [[ ! -x $bin ]]; then
	echo "$0: $bin is not an executable" >&2
	exit 2
fi
examples=$root/docs/examples
files=("$@")
if [[ ${#files[@]} -eq 0 ]]; then
	files=("$root/README.md" "$root"/docs/*.md)
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/pn_doc_tables.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
ln -s "$bin" "$work/bin/penumbra"

# Prints the generated body of one block (fence included) for its opening marker.
generate() {
	local marker=$1 lang args
	if [[ $marker =~ ^'<!-- file: '([A-Za-z0-9._-]+)' -->'$ ]]; then
		printf '```yaml\n'
		cat "$examples/${BASH_REMATCH[1]}" || return 1
		printf '```\n'
		return 0
	fi
	[[ $marker =~ ^'<!-- penumbra'('['([a-z]+)']')?': '(.+)' -->'$ ]] || return 1
	lang=${BASH_REMATCH[2]}
	args=${BASH_REMATCH[3]}
	if [[ $lang == md ]]; then
		(cd "$examples" && PATH="$work/bin:$PATH" sh -c "penumbra $args" 2>&1)
		return 0
	fi
	printf '```%s\n' "$lang"
	while [[ -n $args ]]; do
		local one=${args%% ;; *}
		[[ $one == "$args" ]] && args= || args=${args#* ;; }
		[[ -n $lang ]] || printf '$ penumbra %s\n' "$one"
		# the status is the example's own (an error example exits 2): not ours
		(cd "$examples" && PATH="$work/bin:$PATH" sh -c "penumbra $one" 2>&1) >"$work/out"
		cat "$work/out"
		[[ ! -s $work/out || $(tail -c 1 "$work/out" | od -An -c) == *'\n'* ]] || printf '\n'
	done
	printf '```\n'
}

# Copies $1 to $2 with every block regenerated.
regenerate() {
	local in=$1 out=$2 line inside=false n=0 opened=0
	: >"$out"
	while IFS= read -r line || [[ -n $line ]]; do
		n=$((n + 1))
		if $inside; then
			if [[ $line == '<!-- end -->' ]]; then
				printf '%s\n' "$line" >>"$out"
				inside=false
			fi
			continue
		fi
		printf '%s\n' "$line" >>"$out"
		if [[ $line == '<!-- penumbra'*' -->' || $line == '<!-- file: '*' -->' ]]; then
			if ! generate "$line" >>"$out"; then
				echo "$in:$n: malformed marker: $line" >&2
				return 2
			fi
			inside=true
			opened=$n
		fi
	done <"$in"
	if $inside; then
		echo "$in:$opened: no '<!-- end -->' after this marker" >&2
		return 2
	fi
}

status=0
for f in "${files[@]}"; do
	grep -q -e '^<!-- penumbra' -e '^<!-- file: ' "$f" || continue
	regenerate "$f" "$work/new.md" || exit 2
	if cmp -s "$f" "$work/new.md"; then
		continue
	fi
	if $check; then
		echo "$f: the examples differ from what $(basename "$bin") prints now" \
			"(scripts/doc-tables.sh PENUMBRA_BINARY rewrites them):"
		diff -u "$f" "$work/new.md" | head -60
		status=1
	else
		cp "$work/new.md" "$f"
		echo "rewrote $f"
	fi
done
exit $status
