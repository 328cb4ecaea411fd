// SPDX-License-Identifier: GPL-2.0
/*
 * The event table: every defined event, its okprobes probes (each registered disabled when it
 * is defined, so a bad probe point is refused then, as the kernel's; an event has several once
 * lines were appended to it, append.c), its enabled state, and what kprobe_events and
 * kprobe_profile print of each probe (one line per probe, in the order they were defined, as
 * the kernel lists its trace_kprobes). An enabled event cannot lose a probe (-EBUSY), nor can
 * the table be cleared while any is enabled.
 *
 * Locking (events.h): callers hold okp_events_change_mutex; the list is changed with
 * okp_events_mutex taken here too, and an event's files are removed after it is released.
 */
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "events.h"
#include "../okp_glue.h"
#include "event_address.h"	/* the arch's folder (Kbuild) */

DEFINE_MUTEX(okp_events_change_mutex);
DEFINE_MUTEX(okp_events_mutex);
LIST_HEAD(okp_events);
LIST_HEAD(okp_event_probes);
static unsigned int okp_next_event_id = 1;
static bool okp_events_frozen;	/* module unload: nothing is enabled any more */

struct okp_event *okp_event_find(const char *group, const char *name)
{
	struct okp_event *ev;

	list_for_each_entry(ev, &okp_events, node)
		if (!strcmp(ev->group, group) && !strcmp(ev->name, name))
			return ev;
	return NULL;
}

void okp_event_probe_free(struct okp_event_probe *probe)
{
	unsigned int i;

	if (probe->format) {
		/* the args are its format's, kept for the records that may still print them */
		okp_event_format_retire(probe->format);
	} else {
		for (i = 0; i < probe->nargs; i++)
			okp_fetch_arg_free(&probe->args[i]);
		kfree(probe->args);
	}
	kfree(probe->symbol);
	kfree(probe->module);
	kfree(probe);
}

static struct okp_kprobe *okp_probe_kprobe(struct okp_event_probe *probe)
{
	return probe->event->is_return ? &probe->rp.kp : &probe->kp;
}

/* Where the kernel's own kprobe event on the same place would be, which records print
 * (event_address.h): the address okprobes probes, or the function's start where the kernel
 * would not have moved a probe asked there past the landing pad. */
static unsigned long okp_probe_record_address(const struct okp_event_probe *probe,
					      const struct okp_kprobe *kp)
{
	unsigned long probed = (unsigned long)kp->addr, start, size;
	char name[KSYM_NAME_LEN];

	if (!OKP_ARCH_EVENT_RECORDS_FUNCTION_START || !probe->symbol || probe->offset ||
	    !okp_symbol_extent(probed, name, sizeof(name), &start, &size))
		return probed;
	return start;
}

static int okp_probe_register(struct okp_event_probe *probe)
{
	struct okp_event *ev = probe->event;
	struct okp_kprobe *kp = okp_probe_kprobe(probe);
	int ret;

	kp->symbol_name = probe->symbol;
	kp->addr = probe->symbol ? NULL : (okp_kprobe_opcode_t *)probe->addr;
	kp->offset = probe->offset;
	kp->flags = OKP_KPROBE_FLAG_DISABLED;
	if (ev->is_return) {
		probe->rp.handler = okp_event_kretprobe_hit;
		probe->rp.maxactive = probe->maxactive;
		ret = okp_register_kretprobe(&probe->rp);
	} else {
		probe->kp.pre_handler = okp_event_kprobe_hit;
		ret = okp_register_kprobe(&probe->kp);
	}
	if (ret)
		pr_info("okprobes: event %s/%s: probe on %s refused: %d %s\n", ev->group, ev->name,
			probe->symbol ?: "an address", ret, okp_kprobe_reason(kp));
	else
		probe->record_addr = okp_probe_record_address(probe, kp);
	return ret;
}

static void okp_probe_unregister(struct okp_event_probe *probe)
{
	if (probe->event->is_return)
		okp_unregister_kretprobe(&probe->rp);
	else
		okp_unregister_kprobe(&probe->kp);
}

static int okp_probe_enable(struct okp_event_probe *probe, bool enable)
{
	if (probe->event->is_return)
		return enable ? okp_enable_kretprobe(&probe->rp) : okp_disable_kretprobe(&probe->rp);
	return enable ? okp_enable_kprobe(&probe->kp) : okp_disable_kprobe(&probe->kp);
}

/* Register a probe, or leave it pending on its module: not in the table yet. */
static int okp_probe_start(struct okp_event *ev, struct okp_event_probe *probe)
{
	int ret;

	probe->event = ev;
	/* what its records print with, before any of them can be written */
	ret = okp_event_format_attach(probe);
	if (ret)
		return ret;
	/* before any probe of an event can hit, so a hit finds the instance made or none */
	okp_tracefs_instance_get();
	if (probe->module && !okp_event_module_loaded(probe->module)) {
		probe->pending = true;	/* registered when the module comes (pending.c) */
		return 0;
	}
	return okp_probe_register(probe);
}

int okp_event_add(struct okp_event *ev, struct okp_event_probe *probe)
{
	int ret;

	INIT_LIST_HEAD(&ev->probes);
	ret = okp_probe_start(ev, probe);
	if (ret)
		return ret;
	ev->id = okp_next_event_id++;
	ret = okp_event_files_add(ev);
	if (ret) {
		if (!probe->pending)
			okp_probe_unregister(probe);
		return ret;
	}
	mutex_lock(&okp_events_mutex);
	list_add_tail(&probe->node, &ev->probes);
	list_add_tail(&probe->all_node, &okp_event_probes);
	list_add_tail(&ev->node, &okp_events);
	mutex_unlock(&okp_events_mutex);
	return 0;
}

/* Enabled at once if the event is, as the kernel registers a probe appended to an enabled
 * event. */
int okp_event_append(struct okp_event *ev, struct okp_event_probe *probe)
{
	int ret;

	ret = okp_probe_start(ev, probe);
	if (ret)
		return ret;
	mutex_lock(&okp_events_mutex);
	if (ev->enabled && !probe->pending) {
		ret = okp_probe_enable(probe, true);
		if (ret) {
			mutex_unlock(&okp_events_mutex);
			pr_info("okprobes: event %s/%s: the probe appended on %s could not be enabled: %d\n",
				ev->group, ev->name, probe->symbol ?: "an address", ret);
			okp_probe_unregister(probe);
			return ret;
		}
	}
	list_add_tail(&probe->node, &ev->probes);
	list_add_tail(&probe->all_node, &okp_event_probes);
	mutex_unlock(&okp_events_mutex);
	return 0;
}

/* Out of the table already: the probe, and its memory. */
static void okp_probe_destroy(struct okp_event_probe *probe)
{
	if (!probe->pending)
		okp_probe_unregister(probe);
	okp_event_probe_free(probe);
}

/* Out of the table already, with its probes: its files (first: their readers done), its
 * probes, all the memory. */
static void okp_event_destroy(struct okp_event *ev)
{
	struct okp_event_probe *probe, *next;

	okp_event_files_remove(ev);
	list_for_each_entry_safe(probe, next, &ev->probes, node)
		okp_probe_destroy(probe);
	kfree(ev);
}

/* Take an event and its probes out of the table (okp_events_mutex held). */
static void okp_event_unlink(struct okp_event *ev)
{
	struct okp_event_probe *probe;

	list_for_each_entry(probe, &ev->probes, node)
		list_del(&probe->all_node);
	list_del(&ev->node);
}

/* Does a -: line's [GRP/]EVENT name this event? No group: any group; an empty name after
 * GRP/: every event of the group (the kernel's trace_kprobe_match()). */
static bool okp_event_named(const struct okp_event *ev, const char *group, const char *name)
{
	return (!*name || !strcmp(ev->name, name)) && (!group || !strcmp(ev->group, group));
}

/*
 * -:[GRP/]EVENT [PROBE [ARGS]]: every probe of the events it names that matches the rest of
 * the line, or all of their probes. All or nothing: when one of them is enabled nothing is
 * removed (the kernel removes those before the enabled one in its list, then stops).
 */
int okp_event_remove(const char *group, const char *name, int argc, const char *const *argv)
{
	struct okp_event_probe *probe, *next;
	struct okp_event *ev, *next_ev;
	unsigned int matched = 0, busy = 0;
	LIST_HEAD(removed_events);
	LIST_HEAD(removed_probes);

	mutex_lock(&okp_events_mutex);
	list_for_each_entry(ev, &okp_events, node) {
		unsigned int hits = 0;

		if (!okp_event_named(ev, group, name))
			continue;
		list_for_each_entry(probe, &ev->probes, node)
			hits += okp_event_probe_matches(probe, argc, argv);
		matched += hits;
		busy += hits && ev->enabled;
	}
	/* as the kernel: nothing matched is -ENOENT, enabled or not */
	if (!matched || busy) {
		mutex_unlock(&okp_events_mutex);
		return matched ? -EBUSY : -ENOENT;
	}
	list_for_each_entry_safe(ev, next_ev, &okp_events, node) {
		unsigned int probes = 0, hits = 0;

		if (!okp_event_named(ev, group, name))
			continue;
		list_for_each_entry(probe, &ev->probes, node) {
			probes++;
			hits += okp_event_probe_matches(probe, argc, argv);
		}
		if (hits == probes) {
			/* every probe: the event goes too */
			okp_event_unlink(ev);
			list_add_tail(&ev->node, &removed_events);
			continue;
		}
		list_for_each_entry_safe(probe, next, &ev->probes, node)
			if (okp_event_probe_matches(probe, argc, argv)) {
				list_del(&probe->all_node);
				list_move_tail(&probe->node, &removed_probes);
			}
	}
	mutex_unlock(&okp_events_mutex);
	list_for_each_entry_safe(ev, next_ev, &removed_events, node)
		okp_event_destroy(ev);
	list_for_each_entry_safe(probe, next, &removed_probes, node)
		okp_probe_destroy(probe);
	return 0;
}

int okp_event_remove_all(void)
{
	struct okp_event *ev, *next;
	LIST_HEAD(removed);

	mutex_lock(&okp_events_mutex);
	list_for_each_entry(ev, &okp_events, node)
		if (ev->enabled) {
			mutex_unlock(&okp_events_mutex);
			return -EBUSY;
		}
	list_for_each_entry_safe(ev, next, &okp_events, node) {
		okp_event_unlink(ev);
		list_add_tail(&ev->node, &removed);
	}
	mutex_unlock(&okp_events_mutex);
	list_for_each_entry_safe(ev, next, &removed, node)
		okp_event_destroy(ev);
	return 0;
}

/* Every registered probe of the event enabled or disabled; all or none (okp_events_mutex). */
int okp_event_set_enabled(struct okp_event *ev, bool enable)
{
	struct okp_event_probe *probe;
	int ret = 0;

	if (ev->enabled == enable)
		return 0;
	if (enable && okp_events_frozen)
		return -ENODEV;
	list_for_each_entry(probe, &ev->probes, node) {
		if (probe->pending)
			continue;	/* armed so when its module comes */
		ret = okp_probe_enable(probe, enable);
		if (ret)
			break;
	}
	if (ret) {
		/* back to where it was: the probes done so far undone */
		list_for_each_entry_continue_reverse(probe, &ev->probes, node)
			if (!probe->pending)
				okp_probe_enable(probe, !enable);
		return ret;
	}
	ev->enabled = enable;
	return 0;
}

void okp_event_arm(struct okp_event_probe *probe)
{
	struct okp_event *ev = probe->event;
	int ret;

	/* a probe struct is registered afresh: nothing of its last registration is kept */
	memset(&probe->kp, 0, sizeof(probe->kp));
	memset(&probe->rp, 0, sizeof(probe->rp));
	if (okp_probe_register(probe))
		return;	/* refused (the reason is in the log): it waits for the next load */
	mutex_lock(&okp_events_mutex);
	probe->pending = false;
	if (ev->enabled) {
		ret = okp_probe_enable(probe, true);
		if (ret)
			pr_info("okprobes: event %s/%s: its probe on %s could not be enabled: %d\n",
				ev->group, ev->name, probe->symbol, ret);
	}
	mutex_unlock(&okp_events_mutex);
}

void okp_event_disarm(struct okp_event_probe *probe)
{
	mutex_lock(&okp_events_mutex);
	probe->pending = true;	/* from now on, enabling skips it */
	mutex_unlock(&okp_events_mutex);
	okp_probe_unregister(probe);
}

unsigned long okp_event_hits(const struct okp_event_probe *probe)
{
	return probe->event->is_return ? probe->rp.kp.nhit : probe->kp.nhit;
}

unsigned long okp_event_misses(const struct okp_event_probe *probe)
{
	return probe->event->is_return ? probe->rp.kp.nmissed + probe->rp.nmissed :
					 probe->kp.nmissed;
}

/* As the kernel's trace_kprobe_show(): one line per probe. */
void okp_event_show_definition(struct seq_file *m, const struct okp_event_probe *probe)
{
	const struct okp_event *ev = probe->event;
	unsigned int i;

	seq_putc(m, ev->is_return ? 'r' : 'p');
	if (ev->is_return && probe->maxactive)
		seq_printf(m, "%d", probe->maxactive);
	seq_printf(m, ":%s/%s", ev->group, ev->name);
	if (!probe->symbol)
		seq_printf(m, " 0x%p", (void *)probe->addr);
	else if (probe->offset)
		seq_printf(m, " %s+%u", probe->symbol, probe->offset);
	else
		seq_printf(m, " %s", probe->symbol);
	for (i = 0; i < probe->nargs; i++)
		seq_printf(m, " %s=%s", probe->args[i].name, probe->args[i].text);
	seq_putc(m, '\n');
}

/* Module unload: every event disabled, unregistered and freed, enabled or not. */
void okp_events_teardown(void)
{
	struct okp_event *ev, *next;
	LIST_HEAD(removed);

	mutex_lock(&okp_events_mutex);
	okp_events_frozen = true;
	list_for_each_entry(ev, &okp_events, node)
		okp_event_set_enabled(ev, false);
	list_for_each_entry_safe(ev, next, &okp_events, node) {
		okp_event_unlink(ev);
		list_add_tail(&ev->node, &removed);
	}
	mutex_unlock(&okp_events_mutex);
	list_for_each_entry_safe(ev, next, &removed, node)
		okp_event_destroy(ev);
}
