#!/bin/sh
# Installs the Debian 12 packages modsign builds and tests with, when missing.
# Usage: scripts/install-deps.sh [extra-package...]
set -eu
pkgs="make gcc libc6-dev pkg-config libp11-kit-dev libmbedtls-dev softhsm2 opensc openssl
linux-kbuild-6.1 file $*"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
$sudo apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
