#!/usr/bin/env bash
# install.sh: what a user installs (issue 36), tried as a user would (label cli).
#   install.sh BUILD_DIR prefix  (CTest install_cli): `cmake --install` of the build into a
#     temporary prefix, then the installed files used from another directory: the binary runs
#     and reports its version, every command has a man page that man renders without a
#     warning (on a terminal too, under script(1)) and that lists every option --help lists,
#     the bash completion loads and completes, the zsh completion parses (when zsh is there),
#     the docs are in place.
#   install.sh BUILD_DIR deb  (CTest deb_cli, slow: cpack takes over a minute): the Debian
#     packages cpack builds, their control fields and contents (dpkg-deb): penumbra, the
#     project's version, this machine's architecture; its Depends names exactly the Debian
#     packages of the libraries the binary links, never Open MPI's; the binary, a man page
#     per command, both completions and the docs inside, the MPI module not; the packaged
#     binary runs, and without the MPI module `check --mpi` says which package it lacks.
#     With an MPI build, penumbra-mpi too: the module alone, Depends on penumbra of the
#     same version and on Open MPI's library; unpacked beside penumbra, --mpi finds it.
# Prints one line per case and "N passed, M failed"; exits 1 if any failed, 2 on bad usage.
set -u
if [[ $# -ne 2 || ( $2 != prefix && $2 != deb ) ]]; then
	echo "usage: $0 BUILD_DIR prefix|deb" >&2
	exit 2
fi
build=$(cd "$1" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pn_install.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

ok() {
	echo "ok   $1"
	pass=$((pass + 1))
}
bad() {
	echo "FAIL $1"
	fail=$((fail + 1))
}
finish() {
	echo "$pass passed, $fail failed"
	[[ $fail -eq 0 ]]
	exit
}

prefix_cases() {
	prefix=$tmp/prefix
	if ! cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
		bad "cmake --install"
		tail -n 5 "$tmp/install.log"
		finish
	fi
	ok "cmake --install $build --prefix P"
	mkdir "$tmp/elsewhere"
	cd "$tmp/elsewhere" || exit 2 # nothing of the build or the source is here
	bin=$prefix/bin/penumbra

	if [[ $("$bin" --version) =~ ^penumbra\ [0-9]+\.[0-9]+\.[0-9]+\ \(commit\ ([0-9a-f]{7}(,\ dirty)?|unknown)\)$ ]]; then
		ok "P/bin/penumbra --version: $("$bin" --version)"
	else
		bad "P/bin/penumbra --version: '$("$bin" --version)'"
	fi
	# the installed docs hold the examples: a run from them, in this directory
	if "$bin" run "$prefix/share/doc/penumbra/docs/examples/ex.yaml" --json out.json >/dev/null &&
		grep -q '"scenario": "docs-example"' out.json; then
		ok "P/bin/penumbra run P/share/doc/penumbra/docs/examples/ex.yaml"
	else
		bad "P/bin/penumbra run of the installed example"
	fi

	# A man page per command (and penumbra(1)), found by man through MANPATH, rendered without a
	# warning, naming every option the command's --help names.
	commands=$("$bin" help --commands)
	# shellcheck disable=SC2086 # one word per command
	for page in penumbra $(printf 'penumbra-%s ' $commands); do
		file=$prefix/share/man/man1/$page.1
		cmd=${page#penumbra}
		cmd=${cmd#-}
		found=$(MANPATH=$prefix/share/man man -w "$page" 2>/dev/null)
		if [[ $found != "$file" ]]; then
			bad "man -w $page: '$found', expected $file"
			continue
		fi
		MANWIDTH=80 man --warnings -l "$file" >"$tmp/page" 2>"$tmp/warn"
		if [[ -s $tmp/warn ]] || ! grep -q "^NAME" "$tmp/page"; then
			bad "man -l $page: $(head -n 3 "$tmp/warn")"
			continue
		fi
		# shellcheck disable=SC2086 # no command: penumbra's own options
		"$bin" $cmd --help | grep -Eo '^  (-[a-zA-Z], )?--[a-z-]+' | sed 's/^ *//' >"$tmp/opts"
		missing=
		while read -r opt; do
			grep -qF -- "$opt" "$tmp/page" || missing+=" $opt"
		done <"$tmp/opts"
		if [[ -n $missing || ! -s $tmp/opts ]]; then
			bad "man -l $page lacks$missing"
		else
			ok "man -l $page: renders without a warning, $(wc -l <"$tmp/opts") options as --help"
		fi
	done
	# On a terminal man formats for it (bold as escape sequences, its pager): under script(1),
	# with the pager cat, the page still says what it is.
	script -qec "MANPAGER=cat MANWIDTH=80 man -l $prefix/share/man/man1/penumbra-check.1" /dev/null \
		</dev/null >"$tmp/tty" 2>&1
	if sed 's/\x1b\[[0-9;]*m//g; s/.\x08//g' "$tmp/tty" | grep -Eq 'penumbra.check +. +enumerate +crash'; then
		ok "man -l penumbra-check.1 on a terminal (script -qec)"
	else
		bad "man -l penumbra-check.1 on a terminal: $(head -c 300 "$tmp/tty")"
	fi

	# bash: the completion loads, names its function, and completes commands, options, values.
	completion=$prefix/share/bash-completion/completions/penumbra
	complete_words() { # WORD... : what the completion offers for the last word
		bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _penumbra
			echo "${COMPREPLY[*]}"' _ "$completion" "$@" 2>&1
	}
	if [[ $(bash -c "source '$completion' && complete -p penumbra" 2>&1) == \
		"complete -o filenames -F _penumbra penumbra" ]]; then
		ok "bash: source the completion; complete -p penumbra"
	else
		bad "bash: complete -p penumbra: $(bash -c "source '$completion' && complete -p penumbra" 2>&1)"
	fi
	got=$(complete_words penumbra cr)
	[[ $got == crashtest ]] && ok "bash: penumbra cr<TAB> -> crashtest" || bad "bash: penumbra cr: '$got'"
	got=$(complete_words penumbra check --no)
	[[ $got == --no-shrink ]] && ok "bash: check --no<TAB> -> --no-shrink" || bad "bash: check --no: '$got'"
	got=$(complete_words penumbra compare x.yaml --modes fpw,nof)
	[[ $got == fpw,nofpw ]] && ok "bash: compare --modes fpw,nof<TAB> -> fpw,nofpw" ||
		bad "bash: --modes fpw,nof: '$got'"
	got=$(complete_words penumbra check x.yaml --derive o)
	[[ $got == "on off" ]] && ok "bash: check --derive o<TAB> -> on off" || bad "bash: --derive: '$got'"

	zsh_file=$prefix/share/zsh/vendor-completions/_penumbra
	if [[ $(head -n 1 "$zsh_file") != "#compdef penumbra" ]]; then
		bad "zsh: $zsh_file does not start with #compdef penumbra"
	elif ! command -v zsh >/dev/null; then
		ok "zsh: #compdef penumbra (zsh is not installed: not parsed)"
	elif zsh -n "$zsh_file" && [[ $(HOME=$tmp zsh -f -c "fpath=(${zsh_file%/*} \$fpath);
		autoload -U compinit; compinit -u -d $tmp/zcompdump; print \${_comps[penumbra]}") == _penumbra ]]; then
		ok "zsh: zsh -n parses it, compinit finds it for penumbra"
	else
		bad "zsh -n $zsh_file"
	fi

	for doc in README.md docs/cli.md docs/scenarios.md; do
		[[ -s $prefix/share/doc/penumbra/$doc ]] && ok "P/share/doc/penumbra/$doc" ||
			bad "P/share/doc/penumbra/$doc missing"
	done

	finish
}

deb_cases() {
	if ! (cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/pkg") \
		>"$tmp/cpack.log" 2>&1; then
		bad "cpack -G DEB"
		tail -n 8 "$tmp/cpack.log"
		finish
	fi
	debs=("$tmp"/pkg/penumbra_*.deb)
	if [[ ${#debs[@]} -ne 1 || ! -f ${debs[0]} ]]; then
		bad "cpack wrote no penumbra_*.deb: $(ls "$tmp/pkg")"
		finish
	fi
	deb=${debs[0]}
	version=$("$build/penumbra" --version | cut -d' ' -f2)
	arch=$(dpkg --print-architecture)
	ok "cpack -G DEB: $(basename "$deb")"
	[[ $deb == */penumbra_${version}_$arch.deb ]] && ok "its name: penumbra_${version}_$arch.deb" ||
		bad "its name $(basename "$deb"), expected penumbra_${version}_$arch.deb"

	field() { dpkg-deb -f "$deb" "$1"; }
	[[ $(field Package) == penumbra ]] && ok "Package: penumbra" || bad "Package: $(field Package)"
	[[ $(field Version) == "$version" ]] && ok "Version: $version" || bad "Version: $(field Version)"
	[[ $(field Architecture) == "$arch" ]] && ok "Architecture: $arch" ||
		bad "Architecture: $(field Architecture)"
	[[ -n $(field Maintainer) && -n $(field Description) ]] && ok "Maintainer and Description set" ||
		bad "Maintainer '$(field Maintainer)', Description '$(field Description)'"

	# Depends: the packages that hold the libraries the binary needs, no more, no fewer.
	readelf -d "$build/penumbra" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' >"$tmp/needed"
	: >"$tmp/want"
	while read -r lib; do
		path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
		pkg=$(dpkg -S "$path" 2>/dev/null | head -n 1 | cut -d: -f1)
		[[ -n $pkg ]] || pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -n 1 | cut -d: -f1)
		[[ -n $pkg ]] && echo "$pkg" >>"$tmp/want" || bad "no Debian package holds $lib ($path)"
	done <"$tmp/needed"
	sort -u -o "$tmp/want" "$tmp/want"
	field Depends | tr ',' '\n' | sed 's/^ *//; s/ .*//' | sort -u >"$tmp/depends"
	if cmp -s "$tmp/want" "$tmp/depends"; then
		ok "Depends: $(field Depends)"
	else
		bad "Depends differs from the binary's libraries' packages:"
		diff "$tmp/want" "$tmp/depends"
	fi
	! grep -q 'openmpi' "$tmp/depends" && ok "penumbra's Depends names no Open MPI" ||
		bad "penumbra's Depends names Open MPI: $(field Depends)"

	# Contents: the binary, a man page per command and penumbra(1), the completions, the docs.
	dpkg-deb -c "$deb" | awk '{ print $NF }' >"$tmp/contents"
	want_files=(./usr/bin/penumbra ./usr/share/man/man1/penumbra.1
		./usr/share/bash-completion/completions/penumbra
		./usr/share/zsh/vendor-completions/_penumbra ./usr/share/doc/penumbra/README.md
		./usr/share/doc/penumbra/docs/cli.md)
	for cmd in $("$build/penumbra" help --commands); do
		want_files+=("./usr/share/man/man1/penumbra-$cmd.1")
	done
	missing=
	for f in "${want_files[@]}"; do
		grep -qxF -- "$f" "$tmp/contents" || missing+=" $f"
	done
	[[ -z $missing ]] && ok "dpkg-deb -c: binary, ${#want_files[@]} files (man pages, completion, docs)" ||
		bad "dpkg-deb -c lacks$missing"
	! grep -q 'libpn_exec_mpi' "$tmp/contents" && ok "penumbra holds no MPI module" ||
		bad "penumbra holds the MPI module: $(grep libpn_exec_mpi "$tmp/contents")"

	# The packaged binary runs (the libraries are this machine's), and its pages are the build's.
	dpkg-deb -x "$deb" "$tmp/root"
	got=$("$tmp/root/usr/bin/penumbra" --version 2>&1)
	[[ $got == "$("$build/penumbra" --version)" ]] && ok "the packaged penumbra --version: $got" ||
		bad "the packaged penumbra --version: '$got'"
	if diff -r "$build/gen-docs/man" "$tmp/root/usr/share/man/man1" >/dev/null; then
		ok "its man pages are the build's (gen-docs)"
	else
		bad "its man pages differ from the build's gen-docs/man"
	fi
	scenario=$tmp/root/usr/share/doc/penumbra/docs/examples/ex.yaml
	"$tmp/root/usr/bin/penumbra" check "$scenario" --traces "$tmp/tr" >"$tmp/check.txt" 2>&1 &&
		ok "the packaged penumbra checks a scenario" ||
		bad "the packaged penumbra check exited $?: $(tail -n 3 "$tmp/check.txt")"
	"$tmp/root/usr/bin/penumbra" check "$scenario" --mpi >"$tmp/mpi.txt" 2>&1
	rc=$?
	[[ $rc -eq 2 ]] && grep -q -- "--mpi: .*not installed.*penumbra-mpi" "$tmp/mpi.txt" &&
		ok "without penumbra-mpi, check --mpi says so: $(head -n 1 "$tmp/mpi.txt")" ||
		bad "without penumbra-mpi, check --mpi exited $rc: $(cat "$tmp/mpi.txt")"
	[[ -f $build/libpn_exec_mpi.so ]] && mpi_deb_cases
	finish
}

# penumbra-mpi (an MPI build): the module alone, its Depends, and --mpi finding it once it is
# unpacked beside penumbra.
mpi_deb_cases() {
	local mdeb=$tmp/pkg/penumbra-mpi_${version}_$arch.deb
	[[ -f $mdeb ]] && ok "cpack -G DEB: $(basename "$mdeb")" || {
		bad "no penumbra-mpi_${version}_$arch.deb: $(ls "$tmp/pkg")"
		return
	}
	[[ $(field Suggests) == *penumbra-mpi* ]] && ok "penumbra Suggests: $(field Suggests)" ||
		bad "penumbra Suggests: '$(field Suggests)', expected penumbra-mpi"
	deb=$mdeb
	[[ $(field Package) == penumbra-mpi ]] && ok "Package: penumbra-mpi" ||
		bad "Package: $(field Package)"
	[[ $(field Depends) == *"penumbra (= $version)"* && $(field Depends) == *libopenmpi* ]] &&
		ok "penumbra-mpi Depends: $(field Depends)" ||
		bad "penumbra-mpi Depends: '$(field Depends)', expected penumbra (= $version) and Open MPI"
	[[ $(field Suggests) == *openmpi-bin* ]] && ok "penumbra-mpi Suggests: openmpi-bin (mpirun)" ||
		bad "penumbra-mpi Suggests: '$(field Suggests)', expected openmpi-bin"
	dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $NF }' >"$tmp/mcontents"
	[[ $(cat "$tmp/mcontents") == */penumbra/libpn_exec_mpi.so ]] &&
		ok "penumbra-mpi holds the module alone: $(cat "$tmp/mcontents")" ||
		bad "penumbra-mpi holds: $(cat "$tmp/mcontents")"
	dpkg-deb -x "$deb" "$tmp/root"
	"$tmp/root/usr/bin/penumbra" check "$scenario" --mpi --jobs 2 >"$tmp/mpi.txt" 2>&1
	rc=$?
	[[ $rc -eq 2 ]] && grep -q -- "--jobs and MPI do not mix" "$tmp/mpi.txt" &&
		ok "with penumbra-mpi unpacked, --mpi finds the module" ||
		bad "with penumbra-mpi unpacked, check --mpi --jobs 2 exited $rc: $(cat "$tmp/mpi.txt")"
}

if [[ $2 == prefix ]]; then
	prefix_cases
else
	deb_cases
fi
