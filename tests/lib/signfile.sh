# Sourced: sets SIGNFILE, the kernel's scripts/sign-file the tests and the
# bench take as their oracle, unless the caller set it: the one of the
# release's linux-kbuild package (/usr/lib/linux-kbuild-6.1 on Debian 12,
# /usr/lib/linux-kbuild-6.12.<n>+deb13 on Debian 13; the newest if several
# are installed). scripts/install-deps.sh installs it.
if [ -z "${SIGNFILE:-}" ]; then
	SIGNFILE=$(ls -d /usr/lib/linux-kbuild-*/scripts/sign-file 2>/dev/null | sort -V | tail -n 1)
	# None installed: the Debian 12 path, so that a failure names a file.
	SIGNFILE=${SIGNFILE:-/usr/lib/linux-kbuild-6.1/scripts/sign-file}
fi
