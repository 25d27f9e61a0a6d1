#!/usr/bin/env bash
# deb-clean-test.sh: penumbra's .deb on a clean Debian 12, as a CI image would get it
# (issue 36; CTest deb_clean, label slow: minutes, and it needs root and the Debian archive).
#   deb-clean-test.sh BUILD_DIR SOURCE_DIR
# 1. cpack -G DEB in BUILD_DIR (into BUILD_DIR/deb-clean/pkg): penumbra_*.deb (and, in an MPI
#    build, penumbra-mpi_*.deb, which is left out on purpose).
# 2. A clean Debian 12 root: debootstrap --variant=minbase bookworm, made once and cached as
#    BUILD_DIR/deb-clean/bookworm-minbase.tar.gz (delete it to start over); each run unpacks
#    a fresh copy into a temporary directory.
# 3. In that root (chroot, /proc mounted): apt-get install of penumbra's .deb (its Depends
#    pulled from the archive) and of man-db (minbase has no man); then `penumbra --version`,
#    `penumbra check` of scenarios/protocols/fpw-random.yaml, `man penumbra`; and no Open MPI
#    package or libmpi in the root.
# Prints one line per step and "N passed, M failed"; exits 1 if any failed, 2 when it cannot
# run (bad usage, not root, no debootstrap and none to install, no archive).
# The mirror: PN_DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -u
if [[ $# -ne 2 ]]; then
	echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
	exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
mirror=${PN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=$build/deb-clean
tarball=$cache/bookworm-minbase.tar.gz
counts=(0 0) # passed, failed
# ok TEXT / bad TEXT: one line per step, counted; finish: the totals and the exit status.
ok() { step 0 "ok  " "$1"; }
bad() { step 1 "FAIL" "$1"; }
step() {
	printf '%s %s\n' "$2" "$3"
	counts[$1]=$((counts[$1] + 1))
}
finish() {
	echo "${counts[0]} passed, ${counts[1]} failed"
	exit $((counts[1] > 0))
}
cannot() {
	echo "deb-clean-test.sh: $1" >&2
	exit 2
}

[[ $(id -u) -eq 0 ]] || cannot "needs root (debootstrap, chroot)"
if ! command -v debootstrap >/dev/null; then
	apt-get install -y debootstrap >/dev/null 2>&1 || cannot "no debootstrap, and apt-get install debootstrap failed"
fi
mkdir -p "$cache" || exit 2
root=$(mktemp -d "${TMPDIR:-/tmp}/pn_debclean.XXXXXX") || exit 2
cleanup() {
	umount "$root/proc" 2>/dev/null
	rm -rf --one-file-system "$root"
}
trap cleanup EXIT

# 1. the packages
rm -rf "$cache/pkg"
if ! (cd "$cache" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$cache/pkg") \
	>"$cache/cpack.log" 2>&1; then
	bad "cpack -G DEB (log: $cache/cpack.log)"
	tail -n 8 "$cache/cpack.log"
	finish
fi
debs=("$cache"/pkg/penumbra_*.deb)
[[ -f ${debs[0]} ]] || { bad "cpack wrote no penumbra_*.deb: $(ls "$cache/pkg")"; finish; }
deb=${debs[0]}
ok "cpack -G DEB: $(cd "$cache/pkg" && ls ./*.deb | sed 's|^\./||' | tr '\n' ' ')"

# 2. the clean root, made once
if [[ ! -s $tarball ]]; then
	echo "debootstrap --variant=minbase bookworm (once; cached as $tarball)"
	boot=$root/boot-root
	if ! debootstrap --variant=minbase bookworm "$boot" "$mirror" >"$cache/debootstrap.log" 2>&1; then
		tail -n 8 "$cache/debootstrap.log"
		cannot "debootstrap failed (log: $cache/debootstrap.log)"
	fi
	tar -C "$boot" -czf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball" || cannot "cannot write $tarball"
	rm -rf --one-file-system "$boot"
fi
tar -C "$root" -xzf "$tarball" || cannot "cannot unpack $tarball"
grep -q 'VERSION_ID="12"' "$root/etc/os-release" && ok "a clean root: $(sed -n 's/^PRETTY_NAME=//p' "$root/etc/os-release")" ||
	bad "the root is not Debian 12: $(cat "$root/etc/os-release")"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc" || cannot "cannot mount /proc in the root"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
	LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }

# 3. install and use
cp "$deb" "$root/tmp/" && cp "$src/scenarios/protocols/fpw-random.yaml" "$root/tmp/"
if in_root apt-get update >"$cache/apt.log" 2>&1 &&
	in_root apt-get install -y --no-install-recommends "/tmp/$(basename "$deb")" man-db \
		>>"$cache/apt.log" 2>&1; then
	ok "apt-get install ./$(basename "$deb") man-db"
else
	bad "apt-get install (log: $cache/apt.log)"
	tail -n 12 "$cache/apt.log"
	finish
fi
if in_root dpkg-query -W -f '${Package}\n' | grep -qi 'openmpi\|libmpi'; then
	bad "Open MPI was installed: $(in_root dpkg-query -W -f '${Package}\n' | grep -i 'openmpi\|libmpi')"
elif find "$root/usr/lib" -name 'libmpi*' | grep -q .; then
	bad "a libmpi in the root: $(find "$root/usr/lib" -name 'libmpi*')"
else
	ok "no Open MPI package nor libmpi in the root"
fi
out=$(in_root penumbra --version 2>&1) && ok "penumbra --version: $out" || bad "penumbra --version: $out"
out=$(in_root sh -c 'cd /tmp && penumbra check fpw-random.yaml --traces /tmp/tr' 2>&1)
rc=$?
[[ $rc -eq 0 ]] && ok "penumbra check fpw-random.yaml: $(echo "$out" | tail -n 1)" ||
	bad "penumbra check fpw-random.yaml: exit $rc: $out"
out=$(in_root sh -c 'MANPAGER=cat MANWIDTH=80 man penumbra' 2>&1)
rc=$?
if [[ $rc -eq 0 ]] && echo "$out" | grep -q 'penumbra-check(1)'; then
	ok "man penumbra: $(echo "$out" | sed -n '/^NAME/{n;p;q}' | sed 's/^ *//')"
else
	bad "man penumbra: exit $rc: $(echo "$out" | head -n 5)"
fi
out=$(in_root penumbra check --mpi /tmp/fpw-random.yaml 2>&1)
rc=$?
[[ $rc -eq 2 ]] && ok "check --mpi without penumbra-mpi: exit 2: $out" ||
	bad "check --mpi without penumbra-mpi: exit $rc: $out"
finish
