// SPDX-License-Identifier: GPL-2.0
/*
 * okprobes/record: a kernel trace event of okprobes' own, through which the tracefs instance
 * `okprobes` (tracefs_instance.c) gets a binary copy of each record an event writes to
 * okprobes' buffer, printed by okprobes (record_text.c) only when the instance is read, as
 * the kernel's kprobe events are. Printing at the hit, what the text copy this replaces did,
 * was what the copy cost.
 *
 * How the kernel takes it: trace_add_event_call() wants event_mutex held, which modules
 * cannot take (not exported), so the event is a module's static one instead: a
 * trace_event_call in the "_ftrace_events" section, which the kernel's module loader
 * registers (in every tracefs instance, with its locking) before okprobes' init and removes
 * after okprobes' exit, as it does TRACE_EVENT()s. It is not a tracepoint: its class's reg
 * callback is told when the event is enabled in an instance, and hands the hit path the
 * trace_event_file of okprobes' instance (no other's: enabling it elsewhere writes nothing).
 * okprobes leaves it off there until asked (tracefs_instance.c: its file tracefs_instance,
 * the instance's enable file, trace-cmd all enable the same event).
 * The kernel refuses the events of a module with a "bad taint" (forced load and the like);
 * then okp_instance_event_attach() fails and the instance gets text, as before.
 *
 * An entry is the kernel's common fields, the record's format id and length, and the record
 * as okprobes' buffer holds it. The record names its format by pointer, which an entry may
 * outlive: the reader looks the format up by id (event_format.c), and prints the record as
 * an event okprobes no longer has once it is gone.
 *
 * Lifetime: the hit path reads the published file without a lock; the file is the
 * instance's, which lives while okprobes holds the instance (tracefs_instance.c). At unload
 * the event is disabled before the instance is destroyed; the kernel removes the event itself
 * after okprobes' exit (the module's GOING notifier), clearing the instances' buffers that
 * held it, so no entry is printed by okprobes' text once it is gone.
 *
 * Locking: reg runs under the kernel's event_mutex; the hit path is lockless (the kernel's
 * ring buffer is per-CPU and NMI-safe); the printer runs in the instance's reader.
 */
#include <linux/kprobes.h>
#include <linux/hardirq.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/trace.h>
#include <linux/trace_events.h>
#include <linux/trace_seq.h>

#include "events.h"

#define OKP_INSTANCE_EVENT_SYSTEM "okprobes"
#define OKP_INSTANCE_EVENT_NAME "record"

struct okp_instance_entry {
	struct trace_entry ent;
	u32 format_id;
	u32 len;		/* bytes of record */
	u8 record[];		/* a struct okp_event_record */
};

#ifdef CONFIG_EVENT_TRACING

/* The instance the event writes to while it is enabled there, and its file then. */
static struct trace_array *okp_event_tr;
static struct trace_event_file *okp_event_file;

/* The reader's copy of an entry's record (the kernel's ring aligns entries to 4 bytes only)
 * and its text. One for all readers, under a lock (not per CPU: 4 KiB per CPU would be half
 * of what the kernel keeps for every module's static per-CPU data); a reader in NMI (an
 * oops' ftrace_dump()) only tries it. */
static struct {
	u64 record[OKP_TRACE_RECORD_MAX / sizeof(u64)];
	char text[OKP_TRACE_TEXT_MAX];
} okp_instance_print_scratch;
static DEFINE_RAW_SPINLOCK(okp_instance_print_lock);

static enum print_line_t okp_instance_event_print(struct trace_iterator *iter, int flags,
						  struct trace_event *event)
{
	const struct okp_instance_entry *entry = (const void *)iter->ent;
	const struct okp_event_format *format;
	int room = iter->ent_size - (int)offsetof(struct okp_instance_entry, record);
	int len = entry->len, text_len = 0;
	unsigned long irq_flags;

	if (len < (int)sizeof(struct okp_event_record) || len > room ||
	    len > OKP_TRACE_RECORD_MAX) {
		trace_seq_puts(&iter->seq, "okprobes: a record cut short\n");
		return trace_handle_return(&iter->seq);
	}
	if (in_nmi()) {
		if (!raw_spin_trylock_irqsave(&okp_instance_print_lock, irq_flags)) {
			trace_seq_puts(&iter->seq, "okprobes: a record (its printer is busy)\n");
			return trace_handle_return(&iter->seq);
		}
	} else {
		raw_spin_lock_irqsave(&okp_instance_print_lock, irq_flags);
	}
	memcpy(okp_instance_print_scratch.record, entry->record, len);
	rcu_read_lock();
	format = okp_event_format_find(entry->format_id);
	if (format)
		text_len = okp_event_record_text_as(
			format, (const struct okp_event_record *)okp_instance_print_scratch.record,
			len, 0, OKP_RECORD_TEXT_INSTANCE, okp_instance_print_scratch.text,
			sizeof(okp_instance_print_scratch.text));
	rcu_read_unlock();
	if (format)
		trace_seq_putmem(&iter->seq, okp_instance_print_scratch.text, text_len);
	else
		trace_seq_puts(&iter->seq, "okprobes: a record of an event okprobes no longer has\n");
	raw_spin_unlock_irqrestore(&okp_instance_print_lock, irq_flags);
	return trace_handle_return(&iter->seq);
}

/* Enabled or disabled in an instance (event_mutex held): okprobes' instance's file is the
 * hit path's. Perf cannot attach to it (there is nothing to hook). */
static int okp_instance_event_reg(struct trace_event_call *call, enum trace_reg type, void *data)
{
	struct trace_event_file *file = data;

	switch (type) {
	case TRACE_REG_REGISTER:
		if (file->tr == okp_event_tr)
			WRITE_ONCE(okp_event_file, file);
		return 0;
	case TRACE_REG_UNREGISTER:
		if (file == okp_event_file)
			WRITE_ONCE(okp_event_file, NULL);
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

static struct trace_event_fields okp_instance_event_fields[] = {
	{ .type = "u32", .name = "format_id", .size = sizeof(u32), .align = __alignof__(u32),
	  .is_signed = 0, .filter_type = FILTER_OTHER },
	{ .type = "u32", .name = "len", .size = sizeof(u32), .align = __alignof__(u32),
	  .is_signed = 0, .filter_type = FILTER_OTHER },
	{}
};

static struct trace_event_class okp_instance_event_class = {
	.system = OKP_INSTANCE_EVENT_SYSTEM,
	.reg = okp_instance_event_reg,
	.fields_array = okp_instance_event_fields,
	.fields = LIST_HEAD_INIT(okp_instance_event_class.fields),
	.raw_init = trace_event_raw_init,
};

static struct trace_event_functions okp_instance_event_funcs = {
	.trace = okp_instance_event_print,
};

static struct trace_event_call okp_instance_event_call = {
	.class = &okp_instance_event_class,
	.name = OKP_INSTANCE_EVENT_NAME,
	.event.funcs = &okp_instance_event_funcs,
	/* what a reader other than the kernel's own (trace-cmd) can show: the record is binary */
	.print_fmt = "\"okprobes record: format %u, %u bytes\", REC->format_id, REC->len",
};

/* What the module loader registers (kernel/module: find_module_sections()). */
static struct trace_event_call __used __section("_ftrace_events") *okp_instance_event_ptr =
	&okp_instance_event_call;

int okp_instance_event_attach(struct trace_array *tr, bool on)
{
	int ret;

	okp_event_tr = tr;
	/* off first: in an instance someone made before okprobes, it may be on already (its
	 * file never handed to okprobes); then on, which tells whether the kernel took the
	 * event at all (its reg callback hands over the file), and off again unless wanted */
	trace_array_set_clr_event(tr, OKP_INSTANCE_EVENT_SYSTEM, OKP_INSTANCE_EVENT_NAME, false);
	ret = trace_array_set_clr_event(tr, OKP_INSTANCE_EVENT_SYSTEM, OKP_INSTANCE_EVENT_NAME,
					true);
	if (!ret && !READ_ONCE(okp_event_file))
		ret = -ENOENT;
	if (ret || !on)
		trace_array_set_clr_event(tr, OKP_INSTANCE_EVENT_SYSTEM, OKP_INSTANCE_EVENT_NAME,
					  false);
	if (ret)
		okp_event_tr = NULL;
	return ret;
}

int okp_instance_event_set(bool on)
{
	if (!okp_event_tr)
		return -ENODEV;
	return trace_array_set_clr_event(okp_event_tr, OKP_INSTANCE_EVENT_SYSTEM,
					 OKP_INSTANCE_EVENT_NAME, on);
}

bool okp_instance_event_on(void)
{
	return READ_ONCE(okp_event_file);
}

void okp_instance_event_disable(struct trace_array *tr)
{
	if (okp_event_tr != tr)
		return;
	trace_array_set_clr_event(tr, OKP_INSTANCE_EVENT_SYSTEM, OKP_INSTANCE_EVENT_NAME, false);
	WRITE_ONCE(okp_event_file, NULL);
	okp_event_tr = NULL;
}

void okp_instance_event_write(const struct okp_event_record *rec, int len)
{
	struct trace_event_file *file = READ_ONCE(okp_event_file);
	struct okp_instance_entry *entry;
	struct trace_event_buffer fbuffer;

	if (!file || trace_trigger_soft_disabled(file))
		return;
	entry = trace_event_buffer_reserve(&fbuffer, file, sizeof(*entry) + len);
	if (!entry)
		return;
	entry->format_id = rec->format->id;
	entry->len = len;
	memcpy(entry->record, rec, len);
	trace_event_buffer_commit(&fbuffer);
}
NOKPROBE_SYMBOL(okp_instance_event_write);

#else /* !CONFIG_EVENT_TRACING */

int okp_instance_event_attach(struct trace_array *tr, bool on)
{
	return -EOPNOTSUPP;
}

int okp_instance_event_set(bool on)
{
	return -ENODEV;
}

bool okp_instance_event_on(void)
{
	return false;
}

void okp_instance_event_disable(struct trace_array *tr)
{
}

void okp_instance_event_write(const struct okp_event_record *rec, int len)
{
}

#endif
