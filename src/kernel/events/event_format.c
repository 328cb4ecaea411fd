// SPDX-License-Identifier: GPL-2.0
/*
 * A probe's format (struct okp_event_format): the event name, return kind and arguments a
 * record of the probe is printed with when `trace` or `trace_pipe` is read, as the kernel's
 * records name their trace_event_call. Made before the probe is registered (so every record
 * of it finds it); it takes over the probe's argument array, which the probe keeps using.
 *
 * Lifetime: when the probe is freed (after it is unregistered: no handler of it runs any
 * more, so no new record names the format), the format is retired to the trace buffer, which
 * frees it once every CPU's ring has been read or cleared past its last possible record
 * (trace_buffer.c); at unload, with the buffer. A retired format never changes. The tracefs
 * instance's copies of its records may outlive it (the kernel's ring keeps what okprobes'
 * has dropped): they name it by id, which its reader looks up under rcu_read_lock(); a freed
 * format's id is gone first, its memory after a grace period.
 *
 * Locking: attach runs under okp_events_change_mutex, before the probe can hit; retire takes
 * okp_trace_consume_mutex (trace_buffer.c).
 */
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/xarray.h>

#include "events.h"

/* Every format not freed yet, by id (the tracefs instance's records name their format so). */
static DEFINE_XARRAY_ALLOC1(okp_format_ids);

int okp_event_format_attach(struct okp_event_probe *probe)
{
	struct okp_event_format *format;

	if (probe->format)
		return 0;
	format = kzalloc(sizeof(*format), GFP_KERNEL);
	if (!format)
		return -ENOMEM;
	format->retired_heads = kcalloc(nr_cpu_ids, sizeof(*format->retired_heads), GFP_KERNEL);
	if (!format->retired_heads) {
		kfree(format);
		return -ENOMEM;
	}
	if (xa_alloc(&okp_format_ids, &format->id, format, xa_limit_32b, GFP_KERNEL)) {
		kfree(format->retired_heads);
		kfree(format);
		return -ENOMEM;
	}
	INIT_LIST_HEAD(&format->retired_node);
	strscpy(format->name, probe->event->name, sizeof(format->name));
	format->is_return = probe->event->is_return;
	format->nargs = probe->nargs;
	format->args = probe->args;
	probe->format = format;
	return 0;
}

/* The probe is unregistered (or never was): its records are the last of this format. */
void okp_event_format_retire(struct okp_event_format *format)
{
	okp_trace_buffer_retire(format);
}

/* The probe is unregistered (no hit reads the site): a re-armed probe may be elsewhere. */
void okp_event_format_forget_site(struct okp_event_format *format)
{
	WRITE_ONCE(format->site_addr, 0);
	atomic_set(&format->site_claimed, 0);
}

const struct okp_event_format *okp_event_format_find(u32 id)
{
	return xa_load(&okp_format_ids, id);
}

static void okp_event_format_free_rcu(struct rcu_head *rcu)
{
	struct okp_event_format *format = container_of(rcu, struct okp_event_format, rcu);
	unsigned int i;

	for (i = 0; i < format->nargs; i++)
		okp_fetch_arg_free(&format->args[i]);
	kfree(format->args);
	kfree(format->retired_heads);
	kfree(format);
}

/* The instance's reader may be printing a record of it (under rcu_read_lock()): freed after. */
void okp_event_format_free(struct okp_event_format *format)
{
	xa_erase(&okp_format_ids, format->id);
	call_rcu(&format->rcu, okp_event_format_free_rcu);
}

void okp_event_formats_exit(void)
{
	rcu_barrier();
	WARN_ON_ONCE(!xa_empty(&okp_format_ids));
}
