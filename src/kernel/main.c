// SPDX-License-Identifier: GPL-2.0
/*
 * okprobes module init/exit: finds the kernel internals it needs, brings up the C++ core and
 * its blacklist, hooks module events and the breakpoint trap, then the admin interfaces.
 * Exit tears down in reverse, so no reader or trap can reach a core that is gone.
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/module.h>
#include <linux/init.h>

#include <okprobes/okprobes.h>
#include "okp_glue.h"
#include "events/events.h"

/* Lets a client module check, at its load, that it was built against this okprobes. */
unsigned int okp_api_version(void)
{
	return OKP_API_VERSION;
}
EXPORT_SYMBOL_GPL(okp_api_version);

static int __init okp_init(void)
{
	int ret;

	ret = okp_arch_decoder_selfcheck();
	if (ret)
		return ret;
	ret = okp_symbols_init();
	if (ret)
		return ret;
	okp_jump_label_index_init();
	ret = okp_core_init();
	if (ret) {
		pr_err("core initialisation failed: %d\n", ret);
		okp_jump_label_index_exit();
		return ret;
	}
	ret = okp_blacklist_init();
	if (ret)
		goto err_core;
	ret = okp_modules_init();
	if (ret)
		goto err_core;
	ret = okp_trap_init();
	if (ret)
		goto err_modules;
	okp_return_init();
	ret = okp_debugfs_init();
	if (ret)
		goto err_trap;
	ret = okp_sysctl_init();
	if (ret)
		goto err_debugfs;
	ret = okp_events_init();	/* kprobe events: clients of the API above */
	if (ret)
		goto err_sysctl;
	pr_info("loaded (API %u)\n", OKP_API_VERSION);
	return 0;

err_sysctl:
	okp_sysctl_exit();
err_debugfs:
	okp_debugfs_exit();
err_trap:
	okp_return_exit();
	okp_trap_exit();
err_modules:
	okp_modules_exit();
err_core:
	okp_core_exit();
	okp_jump_label_index_exit();
	return ret;
}

static void __exit okp_exit(void)
{
	okp_events_exit();	/* its probes, enabled or not, before the core goes */
	okp_sysctl_exit();
	okp_debugfs_exit();
	/* No probe is left (clients hold a reference on us), so no trap can still be ours. */
	okp_return_exit();
	okp_core_exit();
	okp_trap_exit();
	okp_modules_exit();
	okp_jump_label_index_exit();
	pr_info("unloaded\n");
}

module_init(okp_init);
module_exit(okp_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes: kprobes as an out-of-tree module, with a C++ core");
