#!/usr/bin/env bash
# CTest engine_neutral: the engine names no protocol family (src/engine/README.md E-rule,
# src/protocol/README.md RB3). Every identifier and string of src/engine/*.[ch] (comments
# stripped: they may name a row as an example) is searched for a family's name: umbra,
# doublewrite, pushdown, page server, gen2, remap, l3/l4, a dw_ or ps_ prefix. A row's state,
# counters and names live in its own file under src/protocol/; the engine offers neutral
# capabilities (slotted store, the PROTO_SELECT / PROTO_DURABLE steps, the row-figures sink).
#
#   tests/engine_neutral.sh [SOURCE_DIR]      exit 0: none named; 1: each hit printed
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
families='umbra|doublewrite|pushdown|page_?server|gen2|remap|(^|[^a-z0-9])(dw|ps)_|(^|[^a-z0-9])l[34]([^a-z0-9]|$)'
hits=0
for f in src/engine/*.[ch]; do
	# comments out (block and line), line numbers kept: a block comment's newlines stay
	code=$(perl -0777 -pe 's{/\*.*?\*/}{ my $c = $&; $c =~ tr/\n//cd; $c }gse; s{//[^\n]*}{}g' "$f")
	if out=$(grep -n -i -E "$families" <<<"$code"); then
		sed "s|^|$f:|" <<<"$out"
		hits=$((hits + 1))
	fi
done
if [[ $hits -ne 0 ]]; then
	echo "engine_neutral: $hits file(s) of src/engine name a protocol family (above);" \
		"move it to the row's file or make it a neutral capability the row configures" >&2
	exit 1
fi
n=$(ls src/engine/*.[ch] | wc -l)
echo "engine_neutral: $n files of src/engine, no protocol family named"
