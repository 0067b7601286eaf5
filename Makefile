# modsign: sign Linux kernel modules with a PKCS#11 token or a PEM key.
# Plain GNU make; honours CC, CPPFLAGS, CFLAGS, LDFLAGS, PKG_CONFIG, PREFIX and DESTDIR.

CC         ?= cc
PKG_CONFIG ?= pkg-config
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
WERROR     ?= -Werror
VERSION    := 0.1.0

CSTD   = -std=c11 -D_DEFAULT_SOURCE
WARN   = -Wall -Wextra $(WERROR) -Wpedantic -Wshadow -Wconversion \
         -Wsign-conversion -Wformat=2 -Wcast-qual -Wwrite-strings \
         -Wstrict-prototypes -Wmissing-prototypes -Wvla \
         -Wimplicit-fallthrough -Wundef
HARDEN = -O2 -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=3 -fstack-protector-strong \
         -fstack-clash-protection -fPIE
LDHARD = -pie -Wl,-z,relro,-z,now,-z,noexecstack
SAN    = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
         -fno-sanitize-recover=all

# A missing library is reported before anything is compiled (not for clean).
ifeq ($(filter clean uninstall,$(MAKECMDGOALS)),)
ifneq ($(shell $(PKG_CONFIG) --exists p11-kit-1 && echo yes),yes)
$(error p11-kit-1 not found by $(PKG_CONFIG): install libp11-kit-dev (scripts/install-deps.sh))
endif
ifneq ($(shell $(PKG_CONFIG) --exists liblzma libzstd zlib && echo yes),yes)
$(error liblzma, libzstd or zlib not found by $(PKG_CONFIG): install liblzma-dev libzstd-dev zlib1g-dev (scripts/install-deps.sh))
endif
ifneq ($(shell printf '\043include <mbedtls/version.h>\n' | $(CC) $(CPPFLAGS) -E - >/dev/null 2>&1 && echo yes),yes)
$(error mbedTLS headers not found: install libmbedtls-dev (scripts/install-deps.sh))
endif
ifneq ($(shell $(PKG_CONFIG) --exists hogweed nettle && printf '\043include <gmp.h>\n' | $(CC) $(CPPFLAGS) -E - >/dev/null 2>&1 && echo yes),yes)
$(error nettle's hogweed or GMP not found: install nettle-dev and libgmp-dev (scripts/install-deps.sh))
endif
endif

P11_CFLAGS  := $(shell $(PKG_CONFIG) --cflags p11-kit-1 2>/dev/null)
P11_LIBS    := $(shell $(PKG_CONFIG) --libs p11-kit-1 2>/dev/null || echo -lp11-kit)
# p11-kit tells no version at run time: --version shows the one built against.
P11_VERSION := $(shell $(PKG_CONFIG) --modversion p11-kit-1 2>/dev/null)
# Debian 12's mbedTLS 2.28 ships no .pc files; 3.x does.
MBED_CFLAGS := $(shell $(PKG_CONFIG) --cflags mbedx509 mbedcrypto 2>/dev/null)
MBED_LIBS   := $(shell $(PKG_CONFIG) --libs mbedx509 mbedcrypto 2>/dev/null || echo -lmbedx509 -lmbedcrypto)
# nettle: every digest (src/cms/digest.c); its hogweed signs RSA with a key
# file (src/signer/hogweed.c), GMP under it.
NETTLE_CFLAGS := $(shell $(PKG_CONFIG) --cflags hogweed nettle 2>/dev/null)
NETTLE_LIBS   := $(shell $(PKG_CONFIG) --libs hogweed nettle 2>/dev/null || echo -lhogweed -lnettle) -lgmp

# Compressed modules (.ko.xz, .ko.zst, .ko.gz): src/modfmt/zcodec_*.c.
Z_CFLAGS    := $(shell $(PKG_CONFIG) --cflags liblzma libzstd zlib 2>/dev/null)
Z_LIBS      := $(shell $(PKG_CONFIG) --libs liblzma libzstd zlib 2>/dev/null || echo -llzma -lzstd -lz)

DEFS    = -DMS_VERSION='"$(VERSION)"' -DMS_P11_KIT_VERSION='"$(P11_VERSION)"'
# -MMD -MP: each object depends on the headers it includes, found by the compiler.
ALL_CFLAGS = $(CSTD) $(WARN) $(DEFS) $(P11_CFLAGS) $(MBED_CFLAGS) $(NETTLE_CFLAGS) $(Z_CFLAGS) -pthread -MMD -MP $(CPPFLAGS)
LIBS    = $(P11_LIBS) $(MBED_LIBS) $(NETTLE_LIBS) $(Z_LIBS) -pthread

# The release binary takes mbedTLS, nettle, GMP, xz, zstd and zlib from their
# static archives (Debian's -dev packages ship them): kbuild starts one
# process per module, and linked shared, 74% of the user-space instructions
# of a process signing one module through the agent were the loader's
# (callgrind: 2.39 M of 3.24 M; static: 0.60 M of 1.44 M; CPU a process
# 5.1 -> 3.7 ms, 2026-12-01). p11-kit, which loads PKCS#11 modules, and libc
# stay shared. LINK=shared links all of them shared; with the default,
# rebuild modsign after a security update of those -dev packages.
LINK ?= static
ifeq ($(LINK),static)
STATIC_ARCHIVES := $(foreach l,mbedx509 mbedcrypto hogweed nettle gmp lzma zstd z,lib$(l).a)
MISSING_ARCHIVES := $(strip $(foreach a,$(STATIC_ARCHIVES),$(if $(filter /%,$(shell $(CC) -print-file-name=$(a))),,$(a))))
ifneq ($(MISSING_ARCHIVES),)
ifeq ($(filter clean uninstall,$(MAKECMDGOALS)),)
$(error $(MISSING_ARCHIVES) not found: install the -dev packages (scripts/install-deps.sh) or build with LINK=shared)
endif
endif
REL_LIBS = $(P11_LIBS) -Wl,-Bstatic $(MBED_LIBS) $(NETTLE_LIBS) $(Z_LIBS) -Wl,-Bdynamic -pthread
else ifeq ($(LINK),shared)
REL_LIBS = $(LIBS)
else
$(error LINK=$(LINK): say static or shared)
endif

LIB_SRC  := $(sort $(wildcard src/common/*.c src/cms/*.c src/pkcs11/*.c src/modfmt/*.c \
                              src/signer/*.c src/agent/*.c src/agentd/*.c src/app/*.c))
CLI_SRC  := $(sort $(filter-out src/cli/main.c,$(wildcard src/cli/*.c)))
UNIT_SRC := $(sort $(wildcard tests/unit/*.c))
SLOWTOKEN_SRC := $(sort $(wildcard tests/slowtoken/*.c))
# The ML-DSA test token and the OpenSSL >= 3.5 it signs with (pq-deps, below).
OPENSSL_PQ ?= $(or $(MODSIGN_OPENSSL_PQ_CACHE),/var/cache/modsign-openssl-pq)
MLDSATOKEN_SRC := $(sort $(filter-out tests/mldsatoken/sign_client.c,$(wildcard tests/mldsatoken/*.c)))
HAVE_OPENSSL_PQ := $(wildcard $(OPENSSL_PQ)/.openssl-stamp)

REL := build/rel
TST := build/san

REL_OBJ  := $(patsubst %.c,$(REL)/%.o,$(LIB_SRC) $(CLI_SRC) src/cli/main.c)
TST_OBJ  := $(patsubst %.c,$(TST)/%.o,$(LIB_SRC) $(CLI_SRC))

.PHONY: all check unit install uninstall clean demo bench kernel-check powercut-check fuzz check-mutants analyze
all: modsign

# `modsign --version` says how each library is linked (src/cli/version.c):
# the release build records LINK in $(LINK_STAMP), rewritten when it
# changes, so that a build with the other LINK recompiles that file and
# links modsign again.
LINK_STAMP := $(REL)/link
ifeq ($(filter clean uninstall,$(MAKECMDGOALS)),)
ifneq ($(shell cat $(LINK_STAMP) 2>/dev/null),$(LINK))
$(shell mkdir -p $(REL) && echo '$(LINK)' >$(LINK_STAMP))
endif
endif
$(REL)/src/cli/version.o: DEFS += -DMS_LINK_STATIC=$(if $(filter static,$(LINK)),1,0)
$(REL)/src/cli/version.o: $(LINK_STAMP)

modsign: $(REL_OBJ) $(LINK_STAMP)
	$(CC) $(LDHARD) $(LDFLAGS) -o $@ $(filter %.o,$^) $(REL_LIBS)

$(REL)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(HARDEN) $(CFLAGS) -c -o $@ $<

$(TST)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN) $(CFLAGS) -c -o $@ $<

# The test build: everything under ASan and UBSan.
$(TST)/modsign: $(TST_OBJ) $(TST)/src/cli/main.o
	$(CC) $(SAN) $(LDFLAGS) -o $@ $^ $(LIBS)

$(TST)/unit: $(TST_OBJ) $(patsubst %.c,$(TST)/%.o,$(UNIT_SRC))
	$(CC) $(SAN) $(LDFLAGS) -o $@ $^ $(LIBS)

unit: $(TST)/unit
	$(TST)/unit

check: $(TST)/modsign $(TST)/unit modsign $(if $(SLOWTOKEN_SRC),build/slowtoken.so) \
	$(if $(HAVE_OPENSSL_PQ),build/mldsatoken.so build/mldsatoken-sign)
	tests/run.sh

demo: modsign
	tests/demo.sh

# valgrind memcheck over the unit tests and the integration scripts
# (tests/valgrind/README.md). A plain debug build: the release sources and
# flags, -O1 -g, no sanitizers and no _FORTIFY_SOURCE (valgrind checks
# instead), linked without the release's hardening flags.
VG      := build/vg
VG_OPT   = -O1 -g -fno-omit-frame-pointer
VG_OBJ  := $(patsubst %.c,$(VG)/%.o,$(LIB_SRC) $(CLI_SRC))

$(VG)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(VG_OPT) $(CFLAGS) -c -o $@ $<

$(VG)/modsign: $(VG_OBJ) $(VG)/src/cli/main.o
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(VG)/unit: $(VG_OBJ) $(patsubst %.c,$(VG)/%.o,$(UNIT_SRC))
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

.PHONY: check-valgrind
check-valgrind: $(VG)/modsign $(VG)/unit modsign $(if $(SLOWTOKEN_SRC),build/slowtoken.so)
	tests/valgrind/run.sh

# Mutation check (tests/mutants/README.md): each mutant is a small bug in a
# guarantee; the tests must catch every one. Not part of `make check` or CI:
# it builds and tests its own copies of the tree, one mutant at a time, under
# nice (about 10 minutes on 2 cores). MUTANTS="name ..." runs a subset.
check-mutants:
	tests/mutants/run.sh $(MUTANTS)

# A PKCS#11 module for tests and benchmarks that forwards to SoftHSM2 and
# adds latency, serialisation or faults (tests/slowtoken/README.md).
build/slowtoken.so: $(SLOWTOKEN_SRC) $(wildcard tests/slowtoken/*.h) src/pkcs11/ckr_list.inc
	@mkdir -p build
	$(CC) $(CSTD) -Wall -Wextra $(WERROR) $(P11_CFLAGS) -O2 -g -fPIC -shared \
		$(CFLAGS) $(LDFLAGS) -o $@ $(SLOWTOKEN_SRC) -ldl -pthread

# ML-DSA test infrastructure (tests/mldsatoken/README.md): an OpenSSL >= 3.5
# and the kernel's sign-file 7.2 built into a cache by scripts/openssl-pq.sh
# (minutes; never by make check), then the test token over that OpenSSL.
# make check builds the token when the cache is there (OPENSSL_PQ, above);
# its test skips when not.
.PHONY: pq-deps
pq-deps:
	scripts/openssl-pq.sh build
	$(MAKE) build/mldsatoken.so build/mldsatoken-sign

# libcrypto.a linked in, its symbols kept inside: a process that already has
# the system's libcrypto.so.3 (OpenSSL 3.0, same soname) loaded, as
# pkcs11-tool has, would otherwise bind the module to it. Never unloaded
# (-z nodelete): OpenSSL's exit handler runs at exit with its code mapped.
build/mldsatoken.so: $(MLDSATOKEN_SRC) $(wildcard tests/mldsatoken/*.h) $(OPENSSL_PQ)/.openssl-stamp
	@mkdir -p build
	$(CC) $(CSTD) -Wall -Wextra $(WERROR) $(P11_CFLAGS) -I$(OPENSSL_PQ)/include -O2 -g -fPIC \
		-fvisibility=hidden -shared $(CFLAGS) $(LDFLAGS) -o $@ $(MLDSATOKEN_SRC) \
		$(OPENSSL_PQ)/lib/libcrypto.a -Wl,--exclude-libs,ALL -Wl,-z,nodelete -ldl -pthread

build/mldsatoken-sign: tests/mldsatoken/sign_client.c src/pkcs11/pkcs11_v32.h
	@mkdir -p build
	$(CC) $(CSTD) -Wall -Wextra $(WERROR) $(P11_CFLAGS) -O2 -g $(CFLAGS) $(LDFLAGS) -o $@ $< -ldl

# Not a test: measures modsign against the kernel's sign-file, writes BENCHMARKS.md
# and its charts (bench/charts/). BENCH_QUICK=1: a few modules, once each, into
# $TMPDIR/modsign-bench-quick/ (a smoke test of the bench; knobs: bench/run.sh).
bench: modsign build/slowtoken.so
	bench/run.sh

# Not a test: CPU time of RSA signatures with a key file, mbedTLS against
# nettle side by side (bench/rsa_cpu.c): build/rsa-cpu tests/data/rsa2048.key.pem
build/rsa-cpu: bench/rsa_cpu.c $(patsubst %.c,$(REL)/%.o,$(LIB_SRC))
	$(CC) $(ALL_CFLAGS) $(HARDEN) $(CFLAGS) $(LDHARD) $(LDFLAGS) -o $@ bench/rsa_cpu.c \
		$(patsubst %.c,$(REL)/%.o,$(LIB_SRC)) $(LIBS)

# Not a test: CPU time of verifying a module signature, mbedTLS against
# nettle side by side (bench/verify_cpu.c): build/verify-cpu tests/data
build/verify-cpu: bench/verify_cpu.c $(patsubst %.c,$(REL)/%.o,$(LIB_SRC))
	$(CC) $(ALL_CFLAGS) $(HARDEN) $(CFLAGS) $(LDHARD) $(LDFLAGS) -o $@ bench/verify_cpu.c \
		$(patsubst %.c,$(REL)/%.o,$(LIB_SRC)) $(LIBS)

# Boots kernels that enforce module signatures and load what modsign signed,
# directly and inside kbuild runs (tests/kernel/README.md). PARTS="sign kbuild
# k612 k72 k72m" runs some of them; k72m (ML-DSA on 7.2) needs the OpenSSL
# cache of pq-deps for sign-file 7.2 and the ML-DSA test token, and skips
# without it.
kernel-check: modsign build/san/modsign build/slowtoken.so $(if $(HAVE_OPENSSL_PQ),build/mldsatoken.so)
	tests/kernel/run.sh $(PARTS)

# Power cuts (issue 15, tests/powercut/README.md): a guest signs modules on a
# qemu disk opened with cache=none and is killed mid-run, again and again;
# each module must come back original or signed. POWERCUT_CUTS=N cuts per
# file system (default 50), POWERCUT_FS="ext4 ext4-noauto xfs".
powercut-check: modsign
	tests/powercut/run.sh

install: modsign
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 0755 modsign $(DESTDIR)$(BINDIR)/modsign
	install -m 0644 doc/modsign.1 $(DESTDIR)$(MANDIR)/man1/modsign.1
	install -d $(DESTDIR)$(BASHCOMPDIR)
	install -m 0644 contrib/bash-completion/modsign $(DESTDIR)$(BASHCOMPDIR)/modsign

# An SPDX 2.3 document for the modsign built (scripts/sbom.pl): the binary's
# SHA-256, and each library in it, static archive or NEEDED entry, as the
# Debian package, version and licence it came from. SBOM_BIN and SBOM_OUT
# name another binary and output (debian/rules: the stripped one).
SBOM_BIN ?= modsign
SBOM_OUT ?= build/modsign.spdx.json
SBOM_ARCHIVES = $(if $(filter static,$(LINK)),$(foreach a,$(STATIC_ARCHIVES),$(shell $(CC) -print-file-name=$(a))))
.PHONY: sbom
sbom: $(SBOM_BIN)
	@mkdir -p $(dir $(SBOM_OUT))
	scripts/sbom.pl --version $(VERSION) --out $(SBOM_OUT) $(SBOM_BIN) $(SBOM_ARCHIVES)

# The Debian package (debian/, linked shared), built in a scratch copy of the
# tree and checked: lintian, install, a signature byte-identical to
# sign-file's from the installed binary, purge leaving nothing
# (scripts/package-check.sh; needs root or sudo). The .deb lands in build/deb/.
.PHONY: deb
deb:
	scripts/package-check.sh

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/modsign $(DESTDIR)$(MANDIR)/man1/modsign.1 \
		$(DESTDIR)$(BASHCOMPDIR)/modsign

clean:
	rm -rf build modsign

# Static analysis, failing on any finding: gcc -fanalyzer over every source,
# then clang's scan-build over the same sources when it is installed
# (scripts/install-deps.sh analyze). Objects go to build/analyze; nothing is
# linked.
ANALYZE_CC ?= gcc
# clang-tools-14 alone installs scan-build-14; clang-tools adds the plain name.
SCAN_BUILD ?= $(firstword $(shell command -v scan-build 2>/dev/null) \
                        $(shell command -v scan-build-14 2>/dev/null))
AN         := build/analyze
AN_SRC     := $(LIB_SRC) $(CLI_SRC) src/cli/main.c

$(AN)/gcc/%.o: %.c
	@mkdir -p $(dir $@)
	$(ANALYZE_CC) $(ALL_CFLAGS) -O1 -fanalyzer $(CFLAGS) -c -o $@ $<

# Compiled by scan-build's compiler wrapper (CC); its findings, not clang's
# warnings, are what fails.
$(AN)/clang/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -Werror,$(ALL_CFLAGS)) -O1 $(CFLAGS) -c -o $@ $<

analyze: $(patsubst %.c,$(AN)/gcc/%.o,$(AN_SRC))
ifneq ($(SCAN_BUILD),)
	rm -rf $(AN)/clang $(AN)/scan
	$(SCAN_BUILD) -o $(AN)/scan --status-bugs $(MAKE) --no-print-directory \
		$(patsubst %.c,$(AN)/clang/%.o,$(AN_SRC))
else
	@echo "analyze: scan-build is not installed (scripts/install-deps.sh analyze): gcc -fanalyzer only"
endif

# libFuzzer targets for every parser of untrusted input (tests/fuzz/README.md).
# `make fuzz` builds them with clang and runs each for FUZZ_SECONDS, one at a
# time; it fails if any target crashes (inputs saved in build/fuzz/crashes/).
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= trailer pkcs7 cert key pbes2 list uri token pin agent xz zstd gzip ecsig strip text mldsa
FUZZ         := build/fuzz
FUZZ_SAN     = -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
               -fno-sanitize-recover=all
# A lower PBKDF2 ceiling, so that a mutated iteration count costs milliseconds.
FUZZ_CFLAGS  = $(ALL_CFLAGS) -Isrc -Itests/fuzz -DMS_FUZZ_DATA_DIR='"$(CURDIR)/tests/data"' \
               -DMS_PBES2_ITER_MAX=20000u $(FUZZ_SAN) $(CFLAGS)
FUZZ_COMMON  := $(wildcard src/common/*.c)
FUZZ_CMS     := $(wildcard src/cms/*.c)
FUZZ_SRC_trailer           = $(wildcard src/modfmt/*.c) $(FUZZ_COMMON)
FUZZ_SRC_pkcs7             = tests/fuzz/fuzz_certs.c $(FUZZ_CMS) $(FUZZ_COMMON)
FUZZ_SRC_cert              = tests/fuzz/fuzz_certs.c $(FUZZ_CMS) $(FUZZ_COMMON)
FUZZ_SRC_key               = tests/fuzz/fuzz_certs.c src/signer/signer.c src/signer/keyfile.c src/signer/pbes2.c src/signer/hogweed.c $(FUZZ_CMS) $(FUZZ_COMMON)
FUZZ_SRC_pbes2             = src/signer/pbes2.c $(FUZZ_CMS) $(FUZZ_COMMON)
FUZZ_SRC_list              = src/app/list.c src/app/say.c $(wildcard src/modfmt/*.c) $(FUZZ_COMMON)
FUZZ_SRC_uri               = $(wildcard src/pkcs11/*.c) $(FUZZ_COMMON)
FUZZ_SRC_token             = $(wildcard src/pkcs11/*.c) $(FUZZ_COMMON)
FUZZ_SRC_pin               = src/cli/pin.c $(FUZZ_COMMON)
FUZZ_SRC_text              = src/cli/msg.c $(FUZZ_COMMON)
FUZZ_SRC_agent             = src/agent/proto.c src/agent/sock.c $(FUZZ_CMS) $(FUZZ_COMMON)
FUZZ_SRC_xz                = tests/fuzz/fuzz_zdec.c $(wildcard src/modfmt/*.c) $(FUZZ_COMMON)
FUZZ_SRC_zstd              = $(FUZZ_SRC_xz)
FUZZ_SRC_gzip              = $(FUZZ_SRC_xz)
FUZZ_SRC_ecsig             = tests/fuzz/fuzz_certs.c $(FUZZ_CMS) $(FUZZ_COMMON)
FUZZ_SRC_strip             = $(wildcard src/modfmt/*.c) $(FUZZ_COMMON)
FUZZ_SRC_mldsa             = $(FUZZ_CMS) $(FUZZ_COMMON)

# Clang warns about src/ in ways gcc does not: shown, not fatal, in this build.
$(FUZZ)/obj/src/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(filter-out -Werror,$(FUZZ_CFLAGS)) -c -o $@ $<

$(FUZZ)/obj/tests/fuzz/%.o: tests/fuzz/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

define FUZZ_RULE
$(FUZZ)/fuzz_$(1): $(FUZZ)/obj/tests/fuzz/fuzz_$(1).o $(FUZZ)/obj/tests/fuzz/fuzz_util.o \
		$$(patsubst %.c,$(FUZZ)/obj/%.o,$$(FUZZ_SRC_$(1)))
	$$(FUZZ_CC) -fsanitize=fuzzer,address,undefined $$(LDFLAGS) -o $$@ $$^ $$(LIBS)
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call FUZZ_RULE,$(t))))

fuzz: $(addprefix $(FUZZ)/fuzz_,$(FUZZ_TARGETS))
	tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# The long run, not in CI: an hour a target (about 14 hours for all, on a quiet
# machine), one at a time. Record what each reached in tests/fuzz/README.md.
FUZZ_LONG_SECONDS ?= 3600
.PHONY: fuzz-long
fuzz-long: $(addprefix $(FUZZ)/fuzz_,$(FUZZ_TARGETS))
	tests/fuzz/run.sh $(FUZZ_LONG_SECONDS) $(FUZZ_TARGETS)

# Header dependencies written by -MMD.
-include $(shell find build -name '*.d' 2>/dev/null)
