// SPDX-License-Identifier: GPL-2.0
/* kernel-check test module: prints one line when loaded and unloaded. */
#include <linux/init.h>
#include <linux/module.h>
#include <linux/printk.h>

static int __init kc_hello_init(void)
{
	pr_info("kc_hello: loaded\n");
	return 0;
}

static void __exit kc_hello_exit(void)
{
	pr_info("kc_hello: unloaded\n");
}

module_init(kc_hello_init);
module_exit(kc_hello_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("modsign kernel-check: trivial module");
