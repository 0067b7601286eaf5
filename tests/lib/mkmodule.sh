#!/bin/sh
# Builds N small but real ELF kernel-module-like objects (relocatable ELF
# with .modinfo, .gnu.linkonce.this_module and code), different from each
# other, as DIR/mod000.ko ... Usage: mkmodule.sh DIR N [SIZE-KIB]
set -eu
dir=$1
n=$2
pad_kib=${3:-16}
mkdir -p "$dir"
src=$dir/.modsrc.c
cat > "$src" <<'CSRC'
struct module { char name[56]; int (*init)(void); };
static const char license[] __attribute__((section(".modinfo"), used)) = "license=GPL";
static const char vermagic[] __attribute__((section(".modinfo"), used)) =
	"vermagic=6.1.0-test SMP preempt mod_unload modversions ";
static const char variant[] __attribute__((section(".modinfo"), used)) =
	"description=modsign test module " VARIANT_STR;
__attribute__((used)) unsigned char blob[PAD_BYTES] = { VARIANT + 1, 2, 3, 5, 7, 11 };
int init_module(void);
int init_module(void) { return blob[VARIANT % PAD_BYTES] + VARIANT; }
struct module __this_module __attribute__((section(".gnu.linkonce.this_module"))) =
	{ .name = "mod" VARIANT_STR, .init = init_module };
CSRC
i=0
while [ "$i" -lt "$n" ]; do
	name=$(printf 'mod%03d' "$i")
	cc -c -O2 -fno-common -DVARIANT="$i" -DVARIANT_STR="\"$i\"" \
		-DPAD_BYTES="$((pad_kib * 1024 + i))" -o "$dir/$name.ko" -x c "$src"
	i=$((i + 1))
done
rm -f "$src"
