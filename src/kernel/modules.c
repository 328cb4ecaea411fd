// SPDX-License-Identifier: GPL-2.0
/*
 * Module lifetime: a module's blacklist sections join the blacklist as it comes; its probes
 * on __init text die when it goes live (that text is freed next); when it goes away its
 * probes become [GONE] before its text is freed, so okprobes never writes freed memory. A
 * probe in a module's text holds a reference on it (okp_seam_module_get).
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/module.h>
#include <linux/notifier.h>
#include <linux/slab.h>

#include "okp_glue.h"

int okp_seam_module_get(void *module)
{
	return try_module_get(module) ? 0 : -ENOENT;
}

void okp_seam_module_put(void *module)
{
	module_put(module);
}

static int okp_module_notify(struct notifier_block *nb, unsigned long state, void *data)
{
	struct module *mod = data;

	switch (state) {
	case MODULE_STATE_COMING:
		okp_blacklist_module(mod);
		break;
	case MODULE_STATE_LIVE:
		okp_core_module_live(mod);
		break;
	case MODULE_STATE_GOING:
		okp_core_module_going(mod);
		okp_core_blacklist_remove_owner(mod);
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block okp_module_nb = {
	.notifier_call = okp_module_notify,
};

/*
 * Modules loaded before okprobes: their blacklist sections too. The walk holds module_mutex,
 * which ranks below the registry lock, so pin the modules here and feed the blacklist after.
 */
#define OKP_EARLY_MODULES 512

struct okp_module_walk {
	struct module *last;
	struct module **pinned;
	unsigned int count;
};

static OKP_KSYM_VISITOR(okp_module_visit)
{
	struct okp_module_walk *walk = data;
#if OKP_KSYM_NO_MODULE_ARG
	/* The walk holds module_mutex: the module of a text symbol stays. (Data symbols have
	 * none here; every module with text has a text symbol too.) */
	struct module *mod = okp_ksyms.__module_text_address ?
		okp_ksyms.__module_text_address(addr) : NULL;
#endif

	if (!mod || mod == walk->last || mod == THIS_MODULE)
		return 0;
	walk->last = mod;
	if (walk->count < OKP_EARLY_MODULES && try_module_get(mod))
		walk->pinned[walk->count++] = mod;
	return 0;
}

int okp_modules_init(void)
{
	struct okp_module_walk walk = {};
	unsigned int i;
	int ret = register_module_notifier(&okp_module_nb);

	if (ret || !okp_ksyms.module_kallsyms_on_each_symbol)
		return ret;
	walk.pinned = kcalloc(OKP_EARLY_MODULES, sizeof(*walk.pinned), GFP_KERNEL);
	if (!walk.pinned) {
		unregister_module_notifier(&okp_module_nb);
		return -ENOMEM;
	}
#if OKP_KSYM_NO_MODULE_ARG
	okp_ksyms.module_kallsyms_on_each_symbol(NULL, okp_module_visit, &walk);
#else
	okp_ksyms.module_kallsyms_on_each_symbol(okp_module_visit, &walk);
#endif
	for (i = 0; i < walk.count; i++) {
		okp_blacklist_module(walk.pinned[i]);
		module_put(walk.pinned[i]);
	}
	kfree(walk.pinned);
	return 0;
}

void okp_modules_exit(void)
{
	unregister_module_notifier(&okp_module_nb);
}
