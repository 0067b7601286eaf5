// SPDX-License-Identifier: GPL-2.0
/*
 * kernel-check out-of-tree module that uses a symbol of an in-tree module
 * (crc_itu_t from lib/crc-itu-t.ko): modprobe loads it through the
 * modules.dep that depmod writes, and it prints the CRC-ITU-T check value
 * of "123456789" (0x31c3) to show that the symbol resolved.
 */
#include <linux/crc-itu-t.h>
#include <linux/init.h>
#include <linux/module.h>
#include <linux/printk.h>

static int __init kc_oot_init(void)
{
	static const u8 check[] = "123456789";

	pr_info("kc_oot: loaded, crc_itu_t=%04x\n", crc_itu_t(0, check, sizeof(check) - 1));
	return 0;
}

static void __exit kc_oot_exit(void)
{
	pr_info("kc_oot: unloaded\n");
}

module_init(kc_oot_init);
module_exit(kc_oot_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("modsign kernel-check: out-of-tree module needing an in-tree one");
