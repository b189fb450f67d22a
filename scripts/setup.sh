#!/usr/bin/env bash
# Installs what building and testing kfold needs on Debian 12, using sudo
# when not root.  Installs nothing that is already there.
set -euo pipefail
pkgs=(
	meson ninja-build pkg-config gcc g++ libc6-dev clang libclang-rt-14-dev
	libelf-dev libdw-dev libzstd-dev liblzma-dev libiberty-dev zlib1g-dev libbz2-dev
	zstd xz-utils python3 linux-perf binutils llvm-14
	libdebuginfod-dev debuginfod strace valgrind libjansson-dev python3-jsonschema
	libcapstone-dev golang-go chromium
)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
echo "setup: installing ${missing[*]}" >&2
$sudo apt-get update -qq || echo "setup: apt-get update failed; installing from the package lists there are" >&2
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
