// SPDX-License-Identifier: GPL-2.0
/*
 * A binary record (record.c) printed as the kernel prints a kprobe event's record when its
 * trace is read,
 *   "<comm>-<pid> [<cpu>] <flags> <sec>.<usec>: <event>: (<sym+off/size>) <args>"
 * and for a return event "(<caller+off/size> <- <func>)"; the arguments as the kernel's
 * print_fmt prints them (0x%x for xN, %pS for symbol, "..." for strings, (fault) for an
 * unreadable string). Symbols are looked up here, at read time, as the kernel's are; a riscv64
 * mapping symbol ("$xrv64i...", which 6.1's module kallsyms does not filter) or local label
 * kallsyms names gives way to the function it stands in (okp_symbol_extent()).
 *
 * Runs when `trace` or `trace_pipe` is read, and at a hit for the tracefs instance's copy
 * (tracefs_instance.c): never sleeps, never allocates, is never traced (Kbuild).
 *
 * The tracefs instance's copy is printed when the instance is read, from its binary copy of
 * the record (instance_event.c), with the function's name before it as the kernel's print
 * event had; where the kernel cannot take okprobes' event (instance_event.c says when), it
 * is printed at the hit (body_only): an entry event's site symbol comes from its format's
 * cache there (okp_format_site()), the one thing a record's text changes in its format.
 *
 * Locking: none of its own. The record's format lives while the caller holds
 * okp_trace_consume_mutex (readers) or the ring the record is being written to (a hit).
 */
#if __has_include(<linux/hex.h>)
#include <linux/hex.h> /* hex_asc: linux/kernel.h no longer brings it in (7.x) */
#endif
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/string.h>
#include <asm/div64.h>

#include "../okp_glue.h"
#include "events.h"

/*
 * Text appended without vsnprintf(), which is most of what printing a record costs (and the
 * tracefs instance's copy is printed at every hit): each writes at most len - 1 characters and
 * a NUL, and returns how many characters it wrote, as scnprintf().
 */
static int okp_put(char *buf, int len, const char *s, size_t n)
{
	if (len <= 0)
		return 0;
	n = min_t(size_t, n, len - 1);
	memcpy(buf, s, n);
	buf[n] = '\0';
	return n;
}
NOKPROBE_SYMBOL(okp_put);

static int okp_put_str(char *buf, int len, const char *s)
{
	return okp_put(buf, len, s, strlen(s));
}
NOKPROBE_SYMBOL(okp_put_str);

/* "0x" and the lowercase digits, as "0x%llx" */
static int okp_put_hex(char *buf, int len, u64 value)
{
	char digits[2 + 16];
	int i = sizeof(digits);

	do {
		digits[--i] = hex_asc[value & 0xf];
		value >>= 4;
	} while (value);
	digits[--i] = 'x';
	digits[--i] = '0';
	return okp_put(buf, len, digits + i, sizeof(digits) - i);
}
NOKPROBE_SYMBOL(okp_put_hex);

/* as "%llu", or "%lld" of a negative value */
static int okp_put_dec(char *buf, int len, u64 value, bool negative)
{
	char digits[1 + 20];
	int i = sizeof(digits);

	do {
		digits[--i] = '0' + do_div(value, 10);
	} while (value);
	if (negative)
		digits[--i] = '-';
	return okp_put(buf, len, digits + i, sizeof(digits) - i);
}
NOKPROBE_SYMBOL(okp_put_dec);

/* "sym+0xoff/0xsize [mod]" of addr, into buf; the mapping symbols and labels a module's
 * kallsyms may name skipped. */
static int okp_format_symbol(char *buf, int len, unsigned long addr)
{
	char name[KSYM_NAME_LEN];
	unsigned long start, size;
	const char *module;
	int used;

	used = scnprintf(buf, len, "%pS", (void *)addr);
	if (used == 0 || (buf[0] != '$' && !(buf[0] == '.' && buf[1] == 'L')))
		return used;
	if (!okp_symbol_extent(addr, name, sizeof(name), &start, &size) || !size ||
	    name[0] == '$')
		return used;
	module = strchr(buf, ' ');	/* " [mod]", after the symbol */
	return scnprintf(buf, len, "%s+0x%lx/0x%lx%s", name, addr - start, size, module ?: "");
}
NOKPROBE_SYMBOL(okp_format_symbol);

/* One number of the argument's type, its bitfield taken out, as the kernel prints it. */
static int okp_format_number(const struct okp_fetch_arg *arg, u64 value, char *buf, int len)
{
	unsigned int shift;
	int used;

	if (arg->size < 8)
		value &= (1ULL << (arg->size * 8)) - 1;
	if (arg->bit_width) {
		shift = 64 - (arg->bit_offset + arg->bit_width);
		value = (value << shift) >> (64 - arg->bit_width);
	}
	switch (arg->kind) {
	case OKP_TYPE_SIGNED: {
		s64 v;

		shift = 64 - arg->size * 8;
		v = (s64)(value << shift) >> shift;
		return okp_put_dec(buf, len, v < 0 ? -(u64)v : v, v < 0);
	}
	case OKP_TYPE_UNSIGNED:
		return okp_put_dec(buf, len, value, false);
	case OKP_TYPE_SYMBOL:
		return okp_format_symbol(buf, len, (unsigned long)value);
	case OKP_TYPE_CHAR: {
		/* '%c': the byte as it is */
		char c[3] = { '\'', (char)value, '\'' };

		return okp_put(buf, len, c, sizeof(c));
	}
	case OKP_TYPE_SYMSTR:
		if (len < 3)
			return 0;
		buf[0] = '"';
		used = 1 + okp_format_symbol(buf + 1, len - 2, (unsigned long)value);
		return used + okp_put(buf + used, len - used, "\"", 1);
	default:
		return okp_put_hex(buf, len, value);
	}
}
NOKPROBE_SYMBOL(okp_format_number);

/* One stored string printed "..." or (fault): the bytes it took in data, or -EINVAL. */
static int okp_format_string(const u8 *data, int data_len, char *buf, int len, int *used)
{
	const char *text = (const char *)data + sizeof(s32);
	s32 n;
	int w;

	if (data_len < (int)sizeof(s32))
		return -EINVAL;
	n = *(const s32 *)data;
	if (n == OKP_STORED_FAULT) {
		*used += okp_put_str(buf, len, "(fault)");
		return 8;
	}
	if (n < 0 || (int)sizeof(s32) + n > data_len)
		return -EINVAL;
	w = okp_put(buf, len, "\"", 1);
	w += okp_put(buf + w, len - w, text, strnlen(text, n));
	w += okp_put(buf + w, len - w, "\"", 1);
	*used += w;
	return ALIGN(sizeof(s32) + n, 8);
}
NOKPROBE_SYMBOL(okp_format_string);

int okp_fetch_args_format(const struct okp_fetch_arg *args, unsigned int nstored,
			  const u8 *data, int data_len, char *buf, int len)
{
	int used = 0, at = 0;
	unsigned int i, j;

	for (i = 0; i < nstored; i++) {
		const struct okp_fetch_arg *arg = &args[i];
		const u64 *values = (const u64 *)(data + at);

		if (arg->kind == OKP_TYPE_STRING || arg->kind == OKP_TYPE_USTRING) {
			s32 n;

			used += okp_put(buf + used, len - used, " ", 1);
			used += okp_put_str(buf + used, len - used, arg->name);
			if (arg->source == OKP_FETCH_IMMSTR) {
				used += okp_put(buf + used, len - used, "=\"", 2);
				used += okp_put_str(buf + used, len - used, arg->immstr);
				used += okp_put(buf + used, len - used, "\"", 1);
				continue;
			}
			used += okp_put(buf + used, len - used, "=", 1);
			if (!arg->count) {
				n = okp_format_string(data + at, data_len - at, buf + used, len - used,
						      &used);
				if (n < 0)
					break;
				at += n;
				continue;
			}
			/* string[N]: {"s0","s1",...} */
			for (j = 0; j < arg->count; j++) {
				used += okp_put(buf + used, len - used, j ? "," : "{", 1);
				n = okp_format_string(data + at, data_len - at, buf + used,
						      len - used, &used);
				if (n < 0)
					break;
				at += n;
			}
			if (j < arg->count)
				break;
			used += okp_put(buf + used, len - used, "}", 1);
			continue;
		}
		if (at + (int)((arg->count ?: 1) * sizeof(u64)) > data_len)
			break;
		used += okp_put(buf + used, len - used, " ", 1);
		used += okp_put_str(buf + used, len - used, arg->name);
		used += okp_put(buf + used, len - used, "=", 1);
		if (!arg->count) {
			used += okp_format_number(arg, values[0], buf + used, len - used);
			at += sizeof(u64);
			continue;
		}
		for (j = 0; j < arg->count; j++) {
			used += okp_put(buf + used, len - used, j ? "," : "{", 1);
			used += okp_format_number(arg, values[j], buf + used, len - used);
		}
		used += okp_put(buf + used, len - used, "}", 1);
		at += arg->count * sizeof(u64);
	}
	return used;
}
NOKPROBE_SYMBOL(okp_fetch_args_format);

/*
 * The probed address's symbol at a hit, for the tracefs instance: an entry probe's address is
 * the same at every hit, so the first hit that claims the format's cache prints it there and
 * publishes it; the others copy it (or, while it is being printed, print their own).
 */
static int okp_copy_text(char *buf, int len, const char *text)
{
	ssize_t n = strscpy(buf, text, len);

	return n < 0 ? max(len - 1, 0) : n;
}
NOKPROBE_SYMBOL(okp_copy_text);

static int okp_format_site(struct okp_event_format *format, unsigned long addr, char *buf,
			   int len)
{
	if (smp_load_acquire(&format->site_addr) == addr)
		return okp_copy_text(buf, len, format->site_text);
	if (READ_ONCE(format->site_addr) || atomic_cmpxchg(&format->site_claimed, 0, 1))
		return okp_format_symbol(buf, len, addr);
	okp_format_symbol(format->site_text, sizeof(format->site_text), addr);
	smp_store_release(&format->site_addr, addr);
	return okp_copy_text(buf, len, format->site_text);
}
NOKPROBE_SYMBOL(okp_format_site);

/* The bare name of the function at addr, as the kernel's kallsyms_lookup(): no offset, no
 * " [module]". */
static int okp_format_function_name(char *buf, int len, unsigned long addr)
{
	int used = okp_format_symbol(buf, len, addr), name = 0;

	while (name < used && buf[name] != '+' && buf[name] != ' ')
		name++;
	if (name < len)
		buf[name] = '\0';
	return name;
}
NOKPROBE_SYMBOL(okp_format_function_name);

int okp_event_record_text_as(const struct okp_event_format *format,
			     const struct okp_event_record *rec, int rec_len, u64 ts,
			     enum okp_record_text_kind kind, char *buf, int len)
{
	int used = 0;

	if (kind == OKP_RECORD_TEXT_LINE)
		used = scnprintf(buf, len, "%16.16s-%-7d [%03d] %.5s %5llu.%06llu: ", rec->comm,
				 rec->pid, rec->cpu, rec->latency, ts / NSEC_PER_SEC,
				 (ts % NSEC_PER_SEC) / NSEC_PER_USEC);
	if (kind == OKP_RECORD_TEXT_INSTANCE) {
		/* what the text entries of the kernel's print event had before the body */
		used = okp_format_function_name(buf, len, rec->func ?: rec->ip);
		used += okp_put(buf + used, len - used, ": ", 2);
	}
	used += okp_put_str(buf + used, len - used, format->name);
	used += okp_put(buf + used, len - used, ": (", 3);
	if (kind == OKP_RECORD_TEXT_BODY_AT_HIT && !format->is_return)
		used += okp_format_site((struct okp_event_format *)format, rec->ip, buf + used,
					len - used);
	else
		used += okp_format_symbol(buf + used, len - used, rec->ip);
	if (format->is_return) {
		used += okp_put(buf + used, len - used, " <- ", 4);
		used += okp_format_function_name(buf + used, len - used, rec->func);
	}
	used += okp_put(buf + used, len - used, ")", 1);
	used += okp_fetch_args_format(format->args, rec->nstored, rec->data,
				      rec_len - (int)sizeof(*rec), buf + used, len - 1 - used);
	used = min(used, len - 2);	/* cut, with room for the line's end */
	buf[used++] = '\n';
	buf[used] = '\0';
	return used;
}
NOKPROBE_SYMBOL(okp_event_record_text_as);

int okp_event_record_text(const struct okp_event_record *rec, int rec_len, u64 ts,
			  bool body_only, char *buf, int len)
{
	return okp_event_record_text_as(rec->format, rec, rec_len, ts,
					body_only ? OKP_RECORD_TEXT_BODY_AT_HIT : OKP_RECORD_TEXT_LINE,
					buf, len);
}
NOKPROBE_SYMBOL(okp_event_record_text);
