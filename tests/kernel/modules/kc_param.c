// SPDX-License-Identifier: GPL-2.0
/* kernel-check test module: a module parameter, reported when loaded. */
#include <linux/init.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>

static int kc_value = 42;
module_param(kc_value, int, 0444);
MODULE_PARM_DESC(kc_value, "a number printed at load time");

static int __init kc_param_init(void)
{
	pr_info("kc_param: loaded, kc_value=%d\n", kc_value);
	return 0;
}

static void __exit kc_param_exit(void)
{
	pr_info("kc_param: unloaded\n");
}

module_init(kc_param_init);
module_exit(kc_param_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("modsign kernel-check: module with a parameter");
