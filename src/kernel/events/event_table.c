// SPDX-License-Identifier: GPL-2.0
/*
 * The event table: every defined event, its okprobes probe (registered disabled when the
 * event is defined, so a bad probe point is refused then, as the kernel's), its enabled state,
 * and what kprobe_events and kprobe_profile print of it. An enabled event cannot be removed
 * (-EBUSY), nor can the table be cleared while any is enabled.
 *
 * Locking (events.h): callers hold okp_events_change_mutex; the list is changed with
 * okp_events_mutex taken here too, and an event's files are removed after it is released.
 */
#include <linux/kernel.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "events.h"

DEFINE_MUTEX(okp_events_change_mutex);
DEFINE_MUTEX(okp_events_mutex);
LIST_HEAD(okp_events);
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

void okp_event_free(struct okp_event *ev)
{
	unsigned int i;

	for (i = 0; i < ev->nargs; i++)
		okp_fetch_arg_free(&ev->args[i]);
	kfree(ev->args);
	kfree(ev->symbol);
	kfree(ev->module);
	kfree(ev);
}

static struct okp_kprobe *okp_event_probe(struct okp_event *ev)
{
	return ev->is_return ? &ev->rp.kp : &ev->kp;
}

static int okp_event_register(struct okp_event *ev)
{
	struct okp_kprobe *kp = okp_event_probe(ev);
	int ret;

	kp->symbol_name = ev->symbol;
	kp->addr = ev->symbol ? NULL : (okp_kprobe_opcode_t *)ev->addr;
	kp->offset = ev->offset;
	kp->flags = OKP_KPROBE_FLAG_DISABLED;
	if (ev->is_return) {
		ev->rp.handler = okp_event_kretprobe_hit;
		ev->rp.maxactive = ev->maxactive;
		ret = okp_register_kretprobe(&ev->rp);
	} else {
		ev->kp.pre_handler = okp_event_kprobe_hit;
		ret = okp_register_kprobe(&ev->kp);
	}
	if (ret)
		pr_info("okprobes: event %s/%s refused: %d %s\n", ev->group, ev->name, ret,
			okp_kprobe_reason(kp));
	return ret;
}

static void okp_event_unregister(struct okp_event *ev)
{
	if (ev->is_return)
		okp_unregister_kretprobe(&ev->rp);
	else
		okp_unregister_kprobe(&ev->kp);
}

int okp_event_add(struct okp_event *ev)
{
	int ret;

	/* before any probe of an event can hit, so a hit finds the instance made or none */
	okp_tracefs_instance_get();
	if (ev->module && !okp_event_module_loaded(ev->module))
		ev->pending = true;	/* registered when the module comes (pending.c) */
	else {
		ret = okp_event_register(ev);
		if (ret)
			return ret;
	}
	ev->id = okp_next_event_id++;
	ret = okp_event_files_add(ev);
	if (ret) {
		if (!ev->pending)
			okp_event_unregister(ev);
		return ret;
	}
	mutex_lock(&okp_events_mutex);
	list_add_tail(&ev->node, &okp_events);
	mutex_unlock(&okp_events_mutex);
	return 0;
}

/* Out of the table already: its probe, its files, its memory. */
static void okp_event_destroy(struct okp_event *ev)
{
	if (!ev->pending)
		okp_event_unregister(ev);
	okp_event_files_remove(ev);
	okp_event_free(ev);
}

int okp_event_remove(const char *group, const char *name)
{
	struct okp_event *ev;

	mutex_lock(&okp_events_mutex);
	ev = okp_event_find(group, name);
	if (!ev || ev->enabled) {
		mutex_unlock(&okp_events_mutex);
		return ev ? -EBUSY : -ENOENT;
	}
	list_del(&ev->node);
	mutex_unlock(&okp_events_mutex);
	okp_event_destroy(ev);
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
	list_splice_init(&okp_events, &removed);
	mutex_unlock(&okp_events_mutex);
	list_for_each_entry_safe(ev, next, &removed, node)
		okp_event_destroy(ev);
	return 0;
}

int okp_event_set_enabled(struct okp_event *ev, bool enable)
{
	int ret;

	if (ev->enabled == enable)
		return 0;
	if (enable && okp_events_frozen)
		return -ENODEV;
	if (ev->pending) {
		ev->enabled = enable;	/* armed so when its module comes */
		return 0;
	}
	if (ev->is_return)
		ret = enable ? okp_enable_kretprobe(&ev->rp) : okp_disable_kretprobe(&ev->rp);
	else
		ret = enable ? okp_enable_kprobe(&ev->kp) : okp_disable_kprobe(&ev->kp);
	if (!ret)
		ev->enabled = enable;
	return ret;
}

void okp_event_arm(struct okp_event *ev)
{
	struct okp_kprobe *kp = ev->is_return ? &ev->rp.kp : &ev->kp;

	/* a probe struct is registered afresh: nothing of its last registration is kept */
	memset(&ev->kp, 0, sizeof(ev->kp));
	memset(&ev->rp, 0, sizeof(ev->rp));
	if (okp_event_register(ev))
		return;	/* refused (the reason is in the log): it waits for the next load */
	mutex_lock(&okp_events_mutex);
	ev->pending = false;
	if (ev->enabled && (ev->is_return ? okp_enable_kretprobe(&ev->rp) : okp_enable_kprobe(kp)))
		ev->enabled = false;
	mutex_unlock(&okp_events_mutex);
}

void okp_event_disarm(struct okp_event *ev)
{
	mutex_lock(&okp_events_mutex);
	ev->pending = true;	/* from now on, enabling only sets the flag */
	mutex_unlock(&okp_events_mutex);
	okp_event_unregister(ev);
}

unsigned long okp_event_hits(const struct okp_event *ev)
{
	return ev->is_return ? ev->rp.kp.nhit : ev->kp.nhit;
}

unsigned long okp_event_misses(const struct okp_event *ev)
{
	return ev->is_return ? ev->rp.kp.nmissed + ev->rp.nmissed : ev->kp.nmissed;
}

/* As the kernel's trace_kprobe_show(). */
void okp_event_show_definition(struct seq_file *m, const struct okp_event *ev)
{
	unsigned int i;

	seq_putc(m, ev->is_return ? 'r' : 'p');
	if (ev->is_return && ev->maxactive)
		seq_printf(m, "%d", ev->maxactive);
	seq_printf(m, ":%s/%s", ev->group, ev->name);
	if (!ev->symbol)
		seq_printf(m, " 0x%p", (void *)ev->addr);
	else if (ev->offset)
		seq_printf(m, " %s+%u", ev->symbol, ev->offset);
	else
		seq_printf(m, " %s", ev->symbol);
	for (i = 0; i < ev->nargs; i++)
		seq_printf(m, " %s=%s", ev->args[i].name, ev->args[i].text);
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
	list_splice_init(&okp_events, &removed);
	mutex_unlock(&okp_events_mutex);
	list_for_each_entry_safe(ev, next, &removed, node)
		okp_event_destroy(ev);
}
