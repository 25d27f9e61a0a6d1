#!/usr/bin/env bash
# gen-docs.sh: the man pages and the shell completion of penumbra, written by the binary
# itself from the option specs it parses by (cli/opts.h), so that what is installed cannot
# say what the binary does not do. The build runs it after linking penumbra; `cmake
# --install` installs what it wrote.
#
# Usage: scripts/gen-docs.sh PENUMBRA_BINARY OUT_DIR
# Writes OUT_DIR/man/penumbra.1 and OUT_DIR/man/penumbra-CMD.1 for each command (troff,
# man(7)), OUT_DIR/completion/penumbra (bash) and OUT_DIR/completion/_penumbra (zsh), then
# OUT_DIR/stamp. Exit 0, or 2 on bad usage or when the binary fails.
set -eu

if [[ $# -ne 2 ]]; then
	echo "usage: $0 PENUMBRA_BINARY OUT_DIR" >&2
	exit 2
fi
bin=$1
out=$2
new=$out.new
rm -rf "$new"
mkdir -p "$new/man" "$new/completion"
trap 'rm -rf "$new"' EXIT
fail() {
	echo "$0: $*" >&2
	exit 2
}
"$bin" help --man >"$new/man/penumbra.1" || fail "$bin help --man failed"
commands=$("$bin" help --commands) || fail "$bin help --commands failed"
for cmd in $commands; do
	"$bin" help --man "$cmd" >"$new/man/penumbra-$cmd.1" || fail "$bin help --man $cmd failed"
done
"$bin" help --completion bash >"$new/completion/penumbra" || fail "no bash completion"
"$bin" help --completion zsh >"$new/completion/_penumbra" || fail "no zsh completion"
: >"$new/stamp"
rm -rf "$out"
mv "$new" "$out"
trap - EXIT
