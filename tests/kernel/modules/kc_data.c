// SPDX-License-Identifier: GPL-2.0
/*
 * kernel-check test module: carries 64 KiB of initialised data, so the
 * signed body is larger than one page, and checks it when loaded.
 */
#include <linux/init.h>
#include <linux/module.h>
#include <linux/printk.h>

#define KC_WORDS (64 * 1024 / sizeof(u32))
#define KC_W(i) (0x9e3779b9u * (u32)(i) + 0x7f4a7c15u)
#define KC_W4(i) KC_W(i), KC_W((i) + 1), KC_W((i) + 2), KC_W((i) + 3)
#define KC_W16(i) KC_W4(i), KC_W4((i) + 4), KC_W4((i) + 8), KC_W4((i) + 12)
#define KC_W64(i) KC_W16(i), KC_W16((i) + 16), KC_W16((i) + 32), KC_W16((i) + 48)
#define KC_W256(i) KC_W64(i), KC_W64((i) + 64), KC_W64((i) + 128), KC_W64((i) + 192)
#define KC_W1K(i) KC_W256(i), KC_W256((i) + 256), KC_W256((i) + 512), KC_W256((i) + 768)

static const u32 kc_table[KC_WORDS] = {
	KC_W1K(0), KC_W1K(1024), KC_W1K(2048), KC_W1K(3072),
	KC_W1K(4096), KC_W1K(5120), KC_W1K(6144), KC_W1K(7168),
	KC_W1K(8192), KC_W1K(9216), KC_W1K(10240), KC_W1K(11264),
	KC_W1K(12288), KC_W1K(13312), KC_W1K(14336), KC_W1K(15360),
};

static int __init kc_data_init(void)
{
	size_t i;

	for (i = 0; i < KC_WORDS; i++) {
		if (kc_table[i] != KC_W(i)) {
			pr_err("kc_data: word %zu differs\n", i);
			return -EINVAL;
		}
	}
	pr_info("kc_data: loaded, %zu words checked\n", i);
	return 0;
}

static void __exit kc_data_exit(void)
{
	pr_info("kc_data: unloaded\n");
}

module_init(kc_data_init);
module_exit(kc_data_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("modsign kernel-check: module with 64 KiB of data");
