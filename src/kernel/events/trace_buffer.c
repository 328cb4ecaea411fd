// SPDX-License-Identifier: GPL-2.0
/*
 * The trace buffer: one ring of records per CPU, each record a timestamp and the binary
 * record the hit path stored (struct okp_event_record), printed as text when it is read
 * (record_text.c). A full ring refuses new records and counts them as dropped (the kernel's
 * ring buffer overwrites the oldest instead). `trace` reads a snapshot of every ring merged by
 * timestamp; `trace_pipe` takes the oldest record of all rings.
 *
 * Records name their probe's format, which must outlive them: a probe's format is retired
 * here when the probe is freed (after it is unregistered, so no record of it is written any
 * more). If no ring holds a record of it, it is freed then; otherwise it is kept with each
 * ring's head at that moment and freed once every ring's tail is past that head (read by
 * trace_pipe, or cleared), or at unload: the retired formats kept are at most as many as the
 * records the rings hold. Rings only drop the newest, never
 * overwrite: a tail moves only under okp_trace_consume_mutex, which is also held while records
 * are printed, so a record being printed always finds its format.
 *
 * This is okprobes' own buffer rather than the kernel's ring_buffer: the kernel's exists only
 * with CONFIG_RING_BUFFER (selected by tracing), and okprobes' events must work on a kernel
 * without it, where okprobes is the only kprobe events there are.
 *
 * Locking: each CPU's ring has an arch_spinlock_t (no lockdep: it is taken in NMIs). The hit
 * path runs with interrupts off and only ever trylocks its own CPU's lock, so a hit in an NMI
 * that interrupted a writer (or a reader) of the same CPU drops its record instead of
 * deadlocking; readers spin on the lock with interrupts off, for a memcpy's time.
 * okp_trace_consume_mutex serializes the readers (trace, trace_pipe, clear) and guards the
 * list of retired formats; it is taken under okp_events_change_mutex and okp_events_mutex (a
 * probe freed), never around them.
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "events.h"

#define OKP_TRACE_RING_SIZE (128 * 1024)	/* bytes per CPU, a multiple of 8 */

struct okp_trace_record_header {
	u32 len;	/* of the text that follows */
	u32 unused;
	u64 ts;
};

struct okp_trace_ring {
	arch_spinlock_t lock;
	/* one vmalloc()ed area: OKP_TRACE_RING_SIZE bytes of records, then scratch and text
	 * (kept out of the per-CPU struct: the records they hold reach 20 KiB together) */
	char *data;
	u64 head, tail;			/* bytes written and taken since the start */
	unsigned long entries;		/* records in the ring */
	unsigned long written;		/* records ever offered (kept or dropped) */
	unsigned long dropped;
	u64 pending_ts;			/* the record being written */
	u64 *scratch;			/* the record being written (OKP_TRACE_RECORD_MAX) */
	char *text;			/* its text, for the tracefs instance (OKP_TRACE_TEXT_MAX) */
};

static struct okp_trace_ring __percpu *okp_trace_rings;
/* Records refused because their CPU's ring was locked (an NMI on top of its writer or reader):
 * counted apart, without the lock, with this_cpu_inc() (one instruction, NMI-safe). */
static DEFINE_PER_CPU(unsigned long, okp_trace_locked_out);
static DEFINE_MUTEX(okp_trace_consume_mutex);
static LIST_HEAD(okp_retired_formats);
/* trace_pipe's record and its text, under okp_trace_consume_mutex. */
static u64 okp_consume_record[OKP_TRACE_RECORD_MAX / sizeof(u64)];
static char okp_consume_text[OKP_TRACE_TEXT_MAX];

static u64 okp_record_size(u32 len)
{
	return ALIGN(sizeof(struct okp_trace_record_header) + len, 8);
}

static void okp_ring_put(struct okp_trace_ring *r, u64 pos, const void *src, size_t n)
{
	size_t at = pos % OKP_TRACE_RING_SIZE, first = min(n, OKP_TRACE_RING_SIZE - at);

	memcpy(r->data + at, src, first);
	memcpy(r->data, (const char *)src + first, n - first);
}
NOKPROBE_SYMBOL(okp_ring_put);

static void okp_ring_get(const struct okp_trace_ring *r, u64 pos, void *dst, size_t n)
{
	size_t at = pos % OKP_TRACE_RING_SIZE, first = min(n, OKP_TRACE_RING_SIZE - at);

	memcpy(dst, r->data + at, first);
	memcpy((char *)dst + first, r->data, n - first);
}

void *okp_trace_buffer_begin(unsigned long *irq_flags, u64 *ts)
{
	struct okp_trace_ring *r;

	local_irq_save(*irq_flags);
	r = this_cpu_ptr(okp_trace_rings);
	if (!arch_spin_trylock(&r->lock)) {
		/* an NMI on top of this CPU's writer or reader: r->dropped is theirs now */
		this_cpu_inc(okp_trace_locked_out);
		local_irq_restore(*irq_flags);
		return NULL;
	}
	r->pending_ts = *ts = local_clock();
	return r->scratch;
}
NOKPROBE_SYMBOL(okp_trace_buffer_begin);

char *okp_trace_buffer_text_scratch(void)
{
	return this_cpu_ptr(okp_trace_rings)->text;
}
NOKPROBE_SYMBOL(okp_trace_buffer_text_scratch);

void okp_trace_buffer_commit(int len, unsigned long irq_flags)
{
	struct okp_trace_ring *r = this_cpu_ptr(okp_trace_rings);
	struct okp_trace_record_header h = { .len = len, .ts = r->pending_ts };
	u64 size = okp_record_size(len);

	r->written++;
	if (r->head - r->tail + size > OKP_TRACE_RING_SIZE) {
		r->dropped++;
	} else {
		okp_ring_put(r, r->head, &h, sizeof(h));
		okp_ring_put(r, r->head + sizeof(h), r->scratch, len);
		r->head += size;
		r->entries++;
	}
	arch_spin_unlock(&r->lock);
	local_irq_restore(irq_flags);
}
NOKPROBE_SYMBOL(okp_trace_buffer_commit);

static void okp_ring_lock(struct okp_trace_ring *r, unsigned long *flags)
{
	local_irq_save(*flags);
	arch_spin_lock(&r->lock);
}

static void okp_ring_unlock(struct okp_trace_ring *r, unsigned long flags)
{
	arch_spin_unlock(&r->lock);
	local_irq_restore(flags);
}

/* Free the retired formats no ring can hold a record of any more (consume mutex held). */
static void okp_reclaim_formats(void)
{
	struct okp_event_format *format, *next;
	int cpu;

	lockdep_assert_held(&okp_trace_consume_mutex);
	list_for_each_entry_safe(format, next, &okp_retired_formats, retired_node) {
		bool referenced = false;

		for_each_possible_cpu(cpu)
			if (READ_ONCE(per_cpu_ptr(okp_trace_rings, cpu)->tail) <
			    format->retired_heads[cpu])
				referenced = true;
		if (referenced)
			continue;
		list_del(&format->retired_node);
		okp_event_format_free(format);
	}
}

/* Does a record of this format lie in the ring between pos and head (ring locked)? */
static bool okp_ring_names(const struct okp_trace_ring *r, u64 pos,
			   const struct okp_event_format *format)
{
	struct okp_trace_record_header h;
	const struct okp_event_format *named;

	for (; pos < r->head; pos += okp_record_size(h.len)) {
		okp_ring_get(r, pos, &h, sizeof(h));
		okp_ring_get(r, pos + sizeof(h), &named, sizeof(named));
		if (named == format)
			return true;
	}
	return false;
}

void okp_trace_buffer_retire(struct okp_event_format *format)
{
	unsigned long flags;
	bool named = false;
	int cpu;

	mutex_lock(&okp_trace_consume_mutex);
	for_each_possible_cpu(cpu) {
		struct okp_trace_ring *r = per_cpu_ptr(okp_trace_rings, cpu);

		/* under the lock: a record committed before is below this head */
		okp_ring_lock(r, &flags);
		format->retired_heads[cpu] = r->head;
		named |= okp_ring_names(r, r->tail, format);
		okp_ring_unlock(r, flags);
	}
	if (named)
		list_add_tail(&format->retired_node, &okp_retired_formats);
	else
		okp_event_format_free(format);	/* no record needs it */
	mutex_unlock(&okp_trace_consume_mutex);
}

void okp_trace_buffer_clear(void)
{
	unsigned long flags;
	int cpu;

	mutex_lock(&okp_trace_consume_mutex);
	for_each_possible_cpu(cpu) {
		struct okp_trace_ring *r = per_cpu_ptr(okp_trace_rings, cpu);

		okp_ring_lock(r, &flags);
		r->tail = r->head;
		r->entries = 0;
		r->written = 0;
		r->dropped = 0;
		per_cpu(okp_trace_locked_out, cpu) = 0;
		okp_ring_unlock(r, flags);
	}
	okp_reclaim_formats();
	mutex_unlock(&okp_trace_consume_mutex);
}

/* One CPU's records, copied out of its ring. */
struct okp_ring_copy {
	char *data;
	u64 len, pos;
};

static bool okp_copy_next(struct okp_ring_copy *c, struct okp_trace_record_header *h)
{
	if (c->pos >= c->len)
		return false;
	memcpy(h, c->data + c->pos, sizeof(*h));
	return true;
}

/* Room for the text of every record copied: grown as records are printed. */
struct okp_text_out {
	char *text;
	size_t len, size;
};

static bool okp_text_reserve(struct okp_text_out *o, size_t room)
{
	char *bigger;
	size_t size;

	if (o->size - o->len >= room)
		return true;
	size = max(o->size * 2, o->len + room);
	bigger = vmalloc(size);
	if (!bigger)
		return false;
	if (o->text)
		memcpy(bigger, o->text, o->len);
	vfree(o->text);
	o->text = bigger;
	o->size = size;
	return true;
}

char *okp_trace_buffer_snapshot(size_t *len, unsigned long *entries, unsigned long *written)
{
	unsigned int ncpus = num_possible_cpus(), i, n = 0;
	struct okp_ring_copy *copies;
	struct okp_text_out out = {};
	u64 total = 0;
	unsigned long flags;
	bool ok = false;
	int cpu;

	*entries = *written = 0;
	copies = kcalloc(ncpus, sizeof(*copies), GFP_KERNEL);
	if (!copies)
		return NULL;
	/* the records' formats live while it is held (a format is freed under it) */
	mutex_lock(&okp_trace_consume_mutex);
	for_each_possible_cpu(cpu) {
		struct okp_trace_ring *r = per_cpu_ptr(okp_trace_rings, cpu);
		struct okp_ring_copy *c = &copies[n++];

		c->data = vmalloc(OKP_TRACE_RING_SIZE);
		if (!c->data)
			goto out;
		okp_ring_lock(r, &flags);
		c->len = r->head - r->tail;
		okp_ring_get(r, r->tail, c->data, c->len);
		*entries += r->entries;
		*written += r->written + READ_ONCE(per_cpu(okp_trace_locked_out, cpu));
		okp_ring_unlock(r, flags);
		total += c->len;
	}
	if (!okp_text_reserve(&out, total * 2 + OKP_TRACE_TEXT_MAX))
		goto out;
	for (;;) {
		struct okp_trace_record_header h, oldest_h;
		struct okp_ring_copy *oldest = NULL;

		for (i = 0; i < n; i++)
			if (okp_copy_next(&copies[i], &h) && (!oldest || h.ts < oldest_h.ts)) {
				oldest = &copies[i];
				oldest_h = h;
			}
		if (!oldest)
			break;
		if (!okp_text_reserve(&out, OKP_TRACE_TEXT_MAX))
			goto out;
		out.len += okp_event_record_text(
			(const struct okp_event_record *)(oldest->data + oldest->pos + sizeof(oldest_h)),
			oldest_h.len, oldest_h.ts, false, out.text + out.len, OKP_TRACE_TEXT_MAX);
		oldest->pos += okp_record_size(oldest_h.len);
	}
	out.text[out.len] = '\0';
	*len = out.len;
	ok = true;
out:
	mutex_unlock(&okp_trace_consume_mutex);
	for (i = 0; i < n; i++)
		vfree(copies[i].data);
	kfree(copies);
	if (!ok) {
		vfree(out.text);
		return NULL;
	}
	return out.text;
}

int okp_trace_buffer_consume(char *buf, size_t len)
{
	struct okp_trace_record_header h;
	struct okp_trace_ring *oldest = NULL;
	u64 oldest_ts = 0;
	unsigned long flags;
	int cpu, ret = 0, text_len;

	mutex_lock(&okp_trace_consume_mutex);
	for_each_possible_cpu(cpu) {
		struct okp_trace_ring *r = per_cpu_ptr(okp_trace_rings, cpu);

		okp_ring_lock(r, &flags);
		if (r->head != r->tail) {
			okp_ring_get(r, r->tail, &h, sizeof(h));
			if (!oldest || h.ts < oldest_ts) {
				oldest = r;
				oldest_ts = h.ts;
			}
		}
		okp_ring_unlock(r, flags);
	}
	if (oldest) {
		/* only this reader moves a tail: the record peeked at is still the oldest */
		okp_ring_lock(oldest, &flags);
		okp_ring_get(oldest, oldest->tail, &h, sizeof(h));
		okp_ring_get(oldest, oldest->tail + sizeof(h), okp_consume_record, h.len);
		okp_ring_unlock(oldest, flags);
		/* printed with the mutex held: its format cannot go before */
		text_len = okp_event_record_text((const struct okp_event_record *)okp_consume_record, h.len,
						 h.ts, false, okp_consume_text,
						 sizeof(okp_consume_text));
		if (text_len > len) {
			ret = -ENOSPC;
		} else {
			memcpy(buf, okp_consume_text, text_len);
			okp_ring_lock(oldest, &flags);
			oldest->tail += okp_record_size(h.len);
			oldest->entries--;
			okp_ring_unlock(oldest, flags);
			okp_reclaim_formats();
			ret = text_len;
		}
	}
	mutex_unlock(&okp_trace_consume_mutex);
	return ret;
}

bool okp_trace_buffer_empty(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct okp_trace_ring *r = per_cpu_ptr(okp_trace_rings, cpu);

		if (READ_ONCE(r->head) != READ_ONCE(r->tail))
			return false;
	}
	return true;
}

int okp_trace_buffer_init(void)
{
	int cpu;

	okp_trace_rings = alloc_percpu(struct okp_trace_ring);
	if (!okp_trace_rings)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct okp_trace_ring *r = per_cpu_ptr(okp_trace_rings, cpu);

		r->lock = (arch_spinlock_t)__ARCH_SPIN_LOCK_UNLOCKED;
		r->data = vzalloc(OKP_TRACE_RING_SIZE + OKP_TRACE_RECORD_MAX + OKP_TRACE_TEXT_MAX);
		if (!r->data) {
			okp_trace_buffer_exit();
			return -ENOMEM;
		}
		r->scratch = (u64 *)(r->data + OKP_TRACE_RING_SIZE);
		r->text = r->data + OKP_TRACE_RING_SIZE + OKP_TRACE_RECORD_MAX;
	}
	return 0;
}

void okp_trace_buffer_exit(void)
{
	struct okp_event_format *format, *next;
	int cpu;

	if (!okp_trace_rings)
		return;
	/* unload: every probe is freed, no record will be read any more */
	list_for_each_entry_safe(format, next, &okp_retired_formats, retired_node) {
		list_del(&format->retired_node);
		okp_event_format_free(format);
	}
	for_each_possible_cpu(cpu)
		vfree(per_cpu_ptr(okp_trace_rings, cpu)->data);
	free_percpu(okp_trace_rings);
	okp_trace_rings = NULL;
}

unsigned long okp_trace_buffer_dropped(void)
{
	unsigned long dropped = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		dropped += READ_ONCE(per_cpu_ptr(okp_trace_rings, cpu)->dropped) +
			   READ_ONCE(per_cpu(okp_trace_locked_out, cpu));
	return dropped;
}
