// SPDX-License-Identifier: GPL-2.0
/*
 * Events on a module that is not loaded: the line is accepted and the event waits ("pending",
 * no probe registered; an event's probes each wait on their own module). When the module comes (MODULE_STATE_COMING: its text is in place, its
 * init has not run) the event's probe is registered, and enabled if the event is, so it fires
 * in the module's init; when the module goes, the probe is unregistered and the event waits
 * again, enabled or not, for the next load. The kernel's probe events behave the same way.
 *
 * Locking (events.h): the notifier takes okp_events_change_mutex, as a kprobe_events write
 * does; the module loader holds none of okprobes' locks when it calls it. okprobes' own module
 * notifier (modules.c) was registered first, so it has blacklisted a coming module's
 * NOKPROBE functions, and marked a going module's probes gone, before this one runs.
 */
#include <linux/module.h>
#include <linux/notifier.h>
#include <linux/string.h>

#include "../okp_glue.h"
#include "events.h"

struct okp_module_probe {
	const char *name;
	bool found;
};

static OKP_KSYM_VISITOR(okp_module_symbol_visit)
{
	struct okp_module_probe *p = data;

#if !OKP_KSYM_NO_MODULE_ARG	/* since 6.2 the walk itself keeps to p->name */
	if (!mod || strcmp(mod->name, p->name))
		return 0;
#endif
	p->found = true;
	return 1;
}

/* Is the module loaded (its symbols listed, from its coming to its going)? */
bool okp_event_module_loaded(const char *name)
{
	struct okp_module_probe p = { .name = name };

	if (!okp_ksyms.module_kallsyms_on_each_symbol)
		return false;
#if OKP_KSYM_NO_MODULE_ARG
	okp_ksyms.module_kallsyms_on_each_symbol(name, okp_module_symbol_visit, &p);
#else
	okp_ksyms.module_kallsyms_on_each_symbol(okp_module_symbol_visit, &p);
#endif
	return p.found;
}

static int okp_events_module_notify(struct notifier_block *nb, unsigned long state, void *data)
{
	struct module *mod = data;
	struct okp_event_probe *probe;

	if (state != MODULE_STATE_COMING && state != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&okp_events_change_mutex);
	list_for_each_entry(probe, &okp_event_probes, all_node) {
		if (!probe->module || strcmp(probe->module, mod->name))
			continue;
		if (state == MODULE_STATE_COMING && probe->pending)
			okp_event_arm(probe);
		else if (state == MODULE_STATE_GOING && !probe->pending) {
			okp_event_disarm(probe);
			/* unregistered: no hit reads its site's text, which the next load may move */
			okp_event_format_forget_site(probe->format);
		}
	}
	mutex_unlock(&okp_events_change_mutex);
	return NOTIFY_DONE;
}

static struct notifier_block okp_events_module_nb = {
	.notifier_call = okp_events_module_notify,
};

int okp_events_pending_init(void)
{
	return register_module_notifier(&okp_events_module_nb);
}

void okp_events_pending_exit(void)
{
	unregister_module_notifier(&okp_events_module_nb);
}
