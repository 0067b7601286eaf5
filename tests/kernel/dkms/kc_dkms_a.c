// SPDX-License-Identifier: GPL-2.0
/* kernel-check DKMS test module: prints one line when loaded and unloaded. */
#include <linux/init.h>
#include <linux/module.h>
#include <linux/printk.h>

static int __init kc_dkms_a_init(void)
{
	pr_info("kc_dkms_a: loaded\n");
	return 0;
}

static void __exit kc_dkms_a_exit(void)
{
	pr_info("kc_dkms_a: unloaded\n");
}

module_init(kc_dkms_a_init);
module_exit(kc_dkms_a_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("modsign kernel-check: DKMS-built module");
