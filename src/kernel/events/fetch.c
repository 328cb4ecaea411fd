// SPDX-License-Identifier: GPL-2.0
/*
 * The hit path's half of fetch arguments: each argument's value read from the registers,
 * the stack or memory, and printed as " name=value" the way the kernel's trace output prints
 * it (0x%x for xN, %pS for symbol, "..." for strings, (fault) for an unreadable string).
 * Every memory read is a nofault read (user memory through the user nofault reads); a numeric
 * value that cannot be read is printed as 0, as the kernel's leaves its field.
 *
 * Runs in a probe handler: never sleeps, never allocates, is never traced (Kbuild) nor
 * probed (NOKPROBE_SYMBOL; okprobes' own probes refuse all of okprobes.ko).
 *
 * Locking: none of its own; the caller holds this CPU's trace buffer.
 */
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "events.h"

static unsigned long okp_fetch_source(const struct okp_fetch_arg *arg, struct pt_regs *regs)
{
	unsigned long value = 0;

	switch (arg->source) {
	case OKP_FETCH_REG:
		return *(unsigned long *)((char *)regs + arg->param);
	case OKP_FETCH_STACK:
		if (copy_from_kernel_nofault(&value, (unsigned long *)kernel_stack_pointer(regs) +
					     arg->param, sizeof(value)))
			return 0;
		return value;
	case OKP_FETCH_STACKP:
		return kernel_stack_pointer(regs);
	case OKP_FETCH_RETVAL:
		return regs_return_value(regs);
	case OKP_FETCH_ARG:
		return okp_arg(regs, arg->param);
	case OKP_FETCH_IMM:
		return arg->param;
	default:
		return value;
	}
}
NOKPROBE_SYMBOL(okp_fetch_source);

static int okp_read_memory(void *dst, unsigned long addr, size_t size, bool user)
{
	if (user)
		return copy_from_user_nofault(dst, (const void __user *)addr, size);
	return copy_from_kernel_nofault(dst, (const void *)addr, size);
}
NOKPROBE_SYMBOL(okp_read_memory);

/* Follow every dereference but the last; *addr is then where the last one reads. */
static int okp_fetch_address(const struct okp_fetch_arg *arg, struct pt_regs *regs,
			     unsigned long *addr)
{
	unsigned long value = okp_fetch_source(arg, regs);
	unsigned int i;

	for (i = 0; i + 1 < arg->nderef; i++)
		if (okp_read_memory(&value, value + arg->deref[i].offset, sizeof(value),
				    arg->deref[i].user))
			return -EFAULT;
	*addr = value + arg->deref[arg->nderef - 1].offset;
	return 0;
}
NOKPROBE_SYMBOL(okp_fetch_address);

/*
 * The NUL-terminated string at addr into dst (cut at size - 1 bytes): its length, or -EFAULT.
 * strncpy_from_kernel_nofault() is not exported to modules; this reads in pieces that never
 * cross a page the string does not reach.
 */
static long okp_read_string(char *dst, unsigned long addr, size_t size, bool user)
{
	size_t done = 0;

	while (done < size - 1) {
		size_t chunk = min3(size - 1 - done, (size_t)16,
				    (size_t)(PAGE_SIZE - ((addr + done) & ~PAGE_MASK)));
		size_t i;

		if (okp_read_memory(dst + done, addr + done, chunk, user))
			return -EFAULT;
		for (i = 0; i < chunk; i++)
			if (!dst[done + i])
				return done + i;
		done += chunk;
	}
	dst[done] = '\0';
	return done;
}
NOKPROBE_SYMBOL(okp_read_string);

static int okp_print_string(const struct okp_fetch_arg *arg, struct pt_regs *regs,
			    char *buf, int len)
{
	char text[OKP_EV_MAX_STRING];
	unsigned long addr;
	bool user = arg->kind == OKP_TYPE_USTRING;
	long copied;

	if (arg->source == OKP_FETCH_COMM)
		return scnprintf(buf, len, " %s=\"%s\"", arg->name, current->comm);
	if (arg->source == OKP_FETCH_IMMSTR)
		return scnprintf(buf, len, " %s=\"%s\"", arg->name, arg->immstr);
	if (arg->nderef) {
		if (okp_fetch_address(arg, regs, &addr))
			goto fault;
		user |= arg->deref[arg->nderef - 1].user;
	} else {
		addr = arg->param;
	}
	copied = okp_read_string(text, addr, sizeof(text), user);
	if (copied < 0)
		goto fault;
	return scnprintf(buf, len, " %s=\"%s\"", arg->name, text);
fault:
	return scnprintf(buf, len, " %s=(fault)", arg->name);
}
NOKPROBE_SYMBOL(okp_print_string);

/*
 * string[N], ustring[N]: N string pointers in memory where the last dereference would read
 * (the kernel reads each pointer as that dereference, kernel or user memory, and each string
 * from user memory for ustring only), printed {"s0","s1",...}, (fault) for one unreadable.
 */
static int okp_print_string_array(const struct okp_fetch_arg *arg, struct pt_regs *regs,
				  char *buf, int len)
{
	char text[OKP_EV_MAX_STRING];
	bool pointers_user = arg->deref[arg->nderef - 1].user;
	bool user = arg->kind == OKP_TYPE_USTRING;
	unsigned long addr, string;
	bool readable = !okp_fetch_address(arg, regs, &addr);
	unsigned int i;
	int used;

	used = scnprintf(buf, len, " %s={", arg->name);
	for (i = 0; i < arg->count; i++) {
		if (i)
			used += scnprintf(buf + used, len - used, ",");
		if (readable &&
		    !okp_read_memory(&string, addr + i * sizeof(string), sizeof(string),
				     pointers_user) &&
		    okp_read_string(text, string, sizeof(text), user) >= 0)
			used += scnprintf(buf + used, len - used, "\"%s\"", text);
		else
			used += scnprintf(buf + used, len - used, "(fault)");
	}
	return used + scnprintf(buf + used, len - used, "}");
}
NOKPROBE_SYMBOL(okp_print_string_array);

/* char (6.12): the byte as a character, '%c'. */
static int okp_print_char(u64 value, char *buf, int len)
{
	return scnprintf(buf, len, "'%c'", (char)value);
}
NOKPROBE_SYMBOL(okp_print_char);

/* The type's bytes at addr, as a number of this CPU's byte order; 0 if unreadable. */
static u64 okp_read_sized(unsigned long addr, unsigned int size, bool user)
{
	union { u8 b; u16 h; u32 w; u64 d; } v;

	if (okp_read_memory(&v, addr, size, user))
		return 0;
	switch (size) {
	case 1: return v.b;
	case 2: return v.h;
	case 4: return v.w;
	default: return v.d;
	}
}
NOKPROBE_SYMBOL(okp_read_sized);

/* One number of the argument's type, its bitfield taken out, as the kernel prints it. */
static int okp_print_number(const struct okp_fetch_arg *arg, u64 value, char *buf, int len)
{
	unsigned int shift;

	if (arg->size < 8)
		value &= (1ULL << (arg->size * 8)) - 1;
	if (arg->bit_width) {
		shift = 64 - (arg->bit_offset + arg->bit_width);
		value = (value << shift) >> (64 - arg->bit_width);
	}
	switch (arg->kind) {
	case OKP_TYPE_SIGNED:
		shift = 64 - arg->size * 8;
		return scnprintf(buf, len, "%lld", (s64)(value << shift) >> shift);
	case OKP_TYPE_UNSIGNED:
		return scnprintf(buf, len, "%llu", value);
	case OKP_TYPE_SYMBOL:
		return scnprintf(buf, len, "%pS", (void *)(unsigned long)value);
	case OKP_TYPE_SYMSTR:
		return scnprintf(buf, len, "\"%pS\"", (void *)(unsigned long)value);
	case OKP_TYPE_CHAR:
		return okp_print_char(value, buf, len);
	default:
		return scnprintf(buf, len, "0x%llx", value);
	}
}
NOKPROBE_SYMBOL(okp_print_number);

/* " name=value", or for TYPE[N] " name={v0,v1,...}" read one after another from memory. */
static int okp_print_value(const struct okp_fetch_arg *arg, struct pt_regs *regs,
			   char *buf, int len)
{
	unsigned long addr = 0;
	bool user = arg->nderef && arg->deref[arg->nderef - 1].user;
	bool readable = arg->nderef && !okp_fetch_address(arg, regs, &addr);
	unsigned int i;
	int used;

	used = scnprintf(buf, len, " %s=", arg->name);
	if (!arg->count) {
		u64 value = 0;

		if (readable)
			value = okp_read_sized(addr, arg->size, user);
		else if (!arg->nderef)
			value = okp_fetch_source(arg, regs);
		return used + okp_print_number(arg, value, buf + used, len - used);
	}
	for (i = 0; i < arg->count; i++) {
		u64 value = readable ? okp_read_sized(addr + i * arg->size, arg->size, user) : 0;

		used += scnprintf(buf + used, len - used, i ? "," : "{");
		used += okp_print_number(arg, value, buf + used, len - used);
	}
	return used + scnprintf(buf + used, len - used, "}");
}
NOKPROBE_SYMBOL(okp_print_value);

int okp_fetch_args_print(const struct okp_fetch_arg *args, unsigned int nargs,
			 struct pt_regs *regs, char *buf, int len)
{
	int used = 0;
	unsigned int i;

	for (i = 0; i < nargs; i++) {
		const struct okp_fetch_arg *arg = &args[i];

		if ((arg->kind == OKP_TYPE_STRING || arg->kind == OKP_TYPE_USTRING) && arg->count)
			used += okp_print_string_array(arg, regs, buf + used, len - used);
		else if (arg->kind == OKP_TYPE_STRING || arg->kind == OKP_TYPE_USTRING)
			used += okp_print_string(arg, regs, buf + used, len - used);
		else
			used += okp_print_value(arg, regs, buf + used, len - used);
	}
	return used;
}
NOKPROBE_SYMBOL(okp_fetch_args_print);
