// SPDX-License-Identifier: GPL-2.0
/*
 * The `okprobes` tracefs instance (/sys/kernel/tracing/instances/okprobes/): where the kernel
 * has tracing (CONFIG_TRACING), while the copy is on, every record an event writes to
 * okprobes' own buffer is also written there, so trace-cmd and the other readers of tracefs
 * see the records too. The copy is on while okprobes' event okprobes/record is enabled in the
 * instance, as any kernel event records into an instance only while enabled there: by its
 * enable file, by `trace-cmd record|start -B okprobes -e okprobes`, or by okprobes' file
 * tracefs_instance, which writes that enable file and reads it back. It is off by default:
 * a copy is a second ring write per hit, which a user reading okprobes' own trace does not
 * need, and a trace-cmd user names the events to record anyway. The copy is binary, an entry
 * of okprobes' kernel trace event okprobes/record (instance_event.c), printed by okprobes
 * when the instance is read, as the kernel's kprobe events are: printing
 * at the hit was what the copy cost beyond the kernel's own kprobe event. Where the kernel has
 * not taken that event (a module with a bad taint gets none), the copy is text printed at the
 * hit from the binary record (record_text.c), written with __trace_array_puts() (a copy into
 * the kernel's ring buffer; trace_array_printk(), which formats the text once more, where the
 * kernel has no __trace_array_puts): the kernel's printk-style entries (the ftrace "print"
 * event: the probed address's symbol, then okprobes' text from the event name on), the same
 * lines; there tracefs_instance alone switches the copy (okp_tracefs_mirror).
 *
 * The instance is made when the first event is defined, not at okprobes' load: it costs the
 * kernel's default ring buffer size on every CPU, which a user of okprobes' C API alone should
 * not pay. A failure to make it is logged once; the events work without it (okprobes' own
 * buffer is the reference). It lives until okprobes unloads: removing the last event keeps
 * its records readable. Without CONFIG_TRACING, linux/trace.h's stubs return no instance.
 *
 * Lifetime: the pointer is published before the first event's probe is registered, so a hit
 * reads either NULL (and writes nothing there) or an instance that exists. okprobes/record is
 * disabled there and the instance destroyed only after every event's probe is unregistered
 * (okp_events_teardown(): unregistering returns once no handler runs any more), so no hit can
 * use an instance being destroyed. While our
 * reference is held, tracefs refuses `rmdir instances/okprobes` (EBUSY); at unload, an
 * instance a reader still holds open cannot be destroyed (EBUSY): it is left, with no
 * reference of okprobes', for rmdir to remove.
 *
 * Locking: okp_tracefs_instance_get() and the switch run under okp_events_change_mutex; the
 * hit path reads the pointer without a lock.
 */
#include <linux/kprobes.h>
#include <linux/trace.h>
#include <linux/version.h>

#include "events.h"

#define OKP_TRACEFS_INSTANCE "okprobes"

static struct trace_array *okp_instance;
/* Its copies are text printed at the hit: the kernel did not take okprobes' event. */
static bool okp_instance_text;
static bool okp_instance_tried;
/* The copy wanted: before the instance is made, and for the text copies. */
static bool okp_tracefs_mirror;

void okp_tracefs_instance_get(void)
{
	struct trace_array *tr;
	int ret;

	if (okp_instance_tried)
		return;
	okp_instance_tried = true;
	if (!IS_ENABLED(CONFIG_TRACING))
		return;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
	/* every event system's directory, as `mkdir instances/okprobes` makes them */
	tr = trace_array_get_by_name(OKP_TRACEFS_INSTANCE, NULL);
#else
	tr = trace_array_get_by_name(OKP_TRACEFS_INSTANCE);
#endif
	if (!tr) {
		pr_warn("okprobes: no tracefs instance %s (the kernel could not make it): events are in okprobes' trace only\n",
			OKP_TRACEFS_INSTANCE);
		return;
	}
	ret = okp_instance_event_attach(tr, okp_tracefs_mirror);
	if (!ret)
		goto publish;
	pr_warn("okprobes: tracefs instance %s: the kernel has no event okprobes/record (%d): its copies of the records are printed at each hit\n",
		OKP_TRACEFS_INSTANCE, ret);
	okp_instance_text = true;
	ret = trace_array_init_printk(tr);
	if (ret) {
		pr_warn("okprobes: tracefs instance %s refused trace_array_printk (%d): events are in okprobes' trace only\n",
			OKP_TRACEFS_INSTANCE, ret);
		trace_array_put(tr);
		trace_array_destroy(tr);
		return;
	}
publish:
	WRITE_ONCE(okp_instance, tr);
}

/* At a hit, under this CPU's ring lock (the text scratch is that CPU's). */
void okp_tracefs_instance_write(const struct okp_event_record *rec, int len, u64 ts)
{
	struct trace_array *tr = READ_ONCE(okp_instance);
	char *text;
	int text_len;

	if (!tr)
		return;
	if (!okp_instance_text) {
		okp_instance_event_write(rec, len);
		return;
	}
	if (!READ_ONCE(okp_tracefs_mirror))
		return;
	text = okp_trace_buffer_text_scratch();
	text_len = okp_event_record_text(rec, len, ts, true, text, OKP_TRACE_TEXT_MAX);
#ifdef trace_array_puts
	__trace_array_puts(tr, rec->func ?: rec->ip, text, text_len);
#else
	trace_array_printk(tr, rec->func ?: rec->ip, "%.*s", text_len, text);
#endif
}
NOKPROBE_SYMBOL(okp_tracefs_instance_write);

bool okp_tracefs_mirror_on(void)
{
	if (READ_ONCE(okp_instance) && !okp_instance_text)
		return okp_instance_event_on();
	return READ_ONCE(okp_tracefs_mirror);
}

int okp_tracefs_mirror_set(bool on)
{
	int ret;

	lockdep_assert_held(&okp_events_change_mutex);
	if (okp_instance && !okp_instance_text) {
		ret = okp_instance_event_set(on);
		if (ret) {
			pr_info("okprobes: tracefs_instance: the instance's okprobes/record refused %s (%d)\n",
				on ? "enabling" : "disabling", ret);
			return ret;
		}
	}
	WRITE_ONCE(okp_tracefs_mirror, on);
	return 0;
}

void okp_tracefs_instance_exit(void)
{
	struct trace_array *tr = okp_instance;
	int ret;

	okp_instance_tried = false;
	okp_instance_text = false;
	okp_tracefs_mirror = false;
	if (!tr)
		return;
	WRITE_ONCE(okp_instance, NULL);
	okp_instance_event_disable(tr);
	trace_array_put(tr);
	ret = trace_array_destroy(tr);
	/* -ENODEV: someone's rmdir took it between our put and here; nothing is left to do */
	if (ret && ret != -ENODEV)
		pr_info("okprobes: tracefs instance %s left in place (%d: in use, a reader has it open); rmdir removes it\n",
			OKP_TRACEFS_INSTANCE, ret);
}
