# shellcheck shell=bash disable=SC2034  # globals read by run.sh and report.sh
# Sourced by bench/run.sh: section (p), the peer on Debian 13. There the
# kernel's own sign-file (linux-kbuild-6.12) reaches a token through
# pkcs11-provider, the upstream way to sign with a token today: the same
# SoftHSM2 key, one sign-file process per module, side by side with modsign
# built on Debian 13 (mbedTLS 3.6) one process per module, under the agent,
# and -b. It runs in the cached trixie chroot of scripts/trixie-chroot.sh
# (made when missing: several minutes, outside the timed runs): a copy of
# this tree and of the sample's first BENCH_P_N modules go to a directory
# bind-mounted at /src, where bench/peer_trixie.sh installs what it needs
# (install-deps.sh base, pkcs11-provider, time), builds modsign and times the
# variants with bench/measure.sh, as here. Its results join this run's.
#   p_sf_loop      sign-file via pkcs11-provider, the PIN in the provider's
#                  configuration (OPENSSL_CONF), a process per module
#   p_sf_loop_uri  the same with the PIN in the URI (pin-value=)
#   p_ms_loop      modsign, a process per module (KBUILD_SIGN_PIN)
#   p_ms_agent     modsign under `modsign agent`, a process per module
#   p_ms_b         modsign -b (default -j)
# Before the runs, untimed probes show what goes wrong with sign-file's PIN
# (peer_trixie.sh: probes). Needs root (chroot, mounts); NOT MEASURED
# otherwise, with the reason.

P_N=${BENCH_P_N:-0}	# 0: the whole sample
SECTION_P="p_sf_loop p_sf_loop_uri p_ms_loop p_ms_agent p_ms_b"
P_URI_BASE=$TOKEN_URI_BASE
CMDTEXT[p_sf_loop]="OPENSSL_CONF=provider-with-pin.cnf; for m in \$(cat list); do sign-file sha256 '$P_URI_BASE' rsa2048.x509.der \$m; done   (Debian 13, /usr/lib/linux-kbuild-6.12.*/scripts/sign-file)"
CMDTEXT[p_sf_loop_uri]="OPENSSL_CONF=provider.cnf; for m in \$(cat list); do sign-file sha256 '$P_URI_BASE?pin-value=$PIN' rsa2048.x509.der \$m; done"
CMDTEXT[p_ms_loop]="KBUILD_SIGN_PIN=$PIN; for m in \$(cat list); do modsign sha256 '$TOKEN_URI' rsa2048.x509.der \$m; done   (modsign built on Debian 13)"
CMDTEXT[p_ms_agent]="KBUILD_SIGN_PIN=$PIN modsign agent '$TOKEN_URI' -- sh -c 'for m in \$(cat list); do modsign sha256 '$TOKEN_URI' rsa2048.x509.der \$m; done'"
CMDTEXT[p_ms_b]="KBUILD_SIGN_PIN=$PIN modsign -b --files-from list sha256 '$TOKEN_URI' rsa2048.x509.der"
P_WHY=""

# run_section_p: the chroot, the directory it sees, the runs inside;
# P_N_REAL is the number of modules, P_WHY why nothing was measured.
run_section_p() {
	local dir=$RUN/peer rc=0
	P_N_REAL=0
	if [ "$(id -u)" -ne 0 ]; then
		P_WHY="needs root (chroot and bind mounts; scripts/trixie-chroot.sh)"
		return 0
	fi
	if ! command -v mmdebstrap >/dev/null && ! "$TOP/scripts/install-deps.sh" mmdebstrap >&2; then
		P_WHY="mmdebstrap is missing and cannot be installed"
		return 0
	fi
	if ! nice -n 19 sh "$TOP/scripts/trixie-chroot.sh" create >&2; then
		P_WHY="scripts/trixie-chroot.sh create failed (see the bench's output)"
		MEASURE_FAILED=1
		return 0
	fi
	rm -rf "$dir"
	mkdir -p "$dir/tree" "$dir/pristine"
	# This tree's files, as scripts/trixie-chroot.sh test copies them.
	(cd "$TOP" && git ls-files -z --cached --others --exclude-standard |
		tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -C "$dir/tree" -xf -
	if [ "$P_N" = 0 ]; then
		cp "$CORPUS_DIR/sample.list" "$dir/pristine.list"
	else
		head -n "$P_N" "$CORPUS_DIR/sample.list" > "$dir/pristine.list"
	fi
	(cd "$CORPUS_DIR/sample" && xargs -d '\n' cp -a --parents -t "$dir/pristine") < "$dir/pristine.list"
	P_N_REAL=$(wc -l < "$dir/pristine.list")
	sh "$TOP/scripts/trixie-chroot.sh" run "$dir" \
		"BENCH_SETTLE=$BENCH_SETTLE bash tree/bench/peer_trixie.sh $REPS" || rc=$?
	# What the runs left: results, logs, fingerprints, probes, versions.
	if [ -f "$dir/run/results.tsv" ]; then
		cat "$dir/run/results.tsv" >> "$RES"
		cp "$dir"/run/log/p_* "$RUN/log/" 2>/dev/null || true
		cp "$dir"/run/md5.p_* "$dir"/run/p7s.p_* "$RUN/" 2>/dev/null || true
		cp "$dir/run/probes.md" "$dir/run/versions.md" "$RUN/" 2>/dev/null || true
	fi
	if [ "$rc" != 0 ]; then
		P_WHY="bench/peer_trixie.sh failed in the chroot (exit $rc): $(tail -n 3 "$dir/run/peer.log" 2>/dev/null | tr '\n' ' ')"
		say "(p) $P_WHY"
		MEASURE_FAILED=1
	fi
	rm -rf "$dir"
}

p_label() {
	case $1 in
	p_sf_loop) echo "sign-file (Debian 13, pkcs11-provider, PIN in its configuration), a process per module" ;;
	p_sf_loop_uri) echo "sign-file (Debian 13, pkcs11-provider, PIN in the URI), a process per module" ;;
	p_ms_loop) echo "modsign, a process per module (no agent)" ;;
	p_ms_agent) echo "modsign under the agent, a process per module" ;;
	p_ms_b) echo "modsign -b (default -j)" ;;
	*) echo "$1" ;;
	esac
}

# p_out V: V's modules against sign-file's on Debian 13 and, when (a) or
# (b) ran, against Debian 12's sign-file with the same key (RSA: the same
# bytes).
p_out() {
	local out="reference" ref
	[ "$1" = p_sf_loop ] || out=$(verify "$1" p_sf_loop)
	ref=$(ref_of)
	if [ -s "$RUN/md5.$ref" ]; then
		out="$out; $(verify "$1" "$ref")"
	fi
	echo "$out"
}

peer_has_runs() {
	has_runs p_sf_loop || has_runs p_ms_b || [ -n "$P_WHY" ]
}

# peer_section: the Markdown of section (p).
peer_section() {
	local v n=$P_N_REAL loop
	printf '## (p) The peer on Debian 13: sign-file through pkcs11-provider, %s modules\n\n' "$n"
	if [ -n "$P_WHY" ] && ! has_runs p_sf_loop; then
		printf 'NOT MEASURED: %s.\n\n' "$P_WHY"
		return 0
	fi
	cat <<EOF
In the Debian 13 chroot of scripts/trixie-chroot.sh, on the same machine: the
kernel's sign-file of Debian 13's linux-kbuild package reaches the key on
SoftHSM2 through pkcs11-provider (OPENSSL_CONF loading the provider), one
process per module as kbuild runs it; modsign built there (mbedTLS 3.6), the
same key and token. $REPS interleaved runs each. How to set this peer up, and
what goes wrong with its PIN: doc/speed.md.

$(cat "$RUN/versions.md" 2>/dev/null)

| variant | median s | min s | max s | ms/module | CPU ms/module | output check |
| --- | ---: | ---: | ---: | ---: | ---: | --- |
EOF
	# shellcheck disable=SC2086  # a list of variants
	plain_rows "$n" p_label p_out $SECTION_P
	loop=$(median_of p_sf_loop)
	printf '\n'
	for v in p_ms_loop p_ms_agent p_ms_b; do
		printf -- '- sign-file (PIN in its configuration), a process per module / %s = %sx in wall time, %sx in CPU time\n' \
			"$(p_label "$v")" "$(ratio "$loop" "$(median_of "$v")")" \
			"$(ratio "$(cpu_of p_sf_loop)" "$(cpu_of "$v")")"
	done
	printf '\n'
	if [ -s "$RUN/probes.md" ]; then
		printf "What sign-file does with the PIN elsewhere (untimed probes before the runs, each under \`timeout\`):\n\n"
		cat "$RUN/probes.md"
		printf '\n'
	fi
}
