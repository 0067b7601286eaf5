// SPDX-License-Identifier: GPL-2.0
/* kernel-check DKMS test module: prints one line when loaded and unloaded. */
#include <linux/init.h>
#include <linux/module.h>
#include <linux/printk.h>

static int __init kc_dkms_b_init(void)
{
	pr_info("kc_dkms_b: loaded\n");
	return 0;
}

static void __exit kc_dkms_b_exit(void)
{
	pr_info("kc_dkms_b: unloaded\n");
}

module_init(kc_dkms_b_init);
module_exit(kc_dkms_b_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("modsign kernel-check: DKMS-built module");
