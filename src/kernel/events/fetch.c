// SPDX-License-Identifier: GPL-2.0
/*
 * The hit path's half of fetch arguments: each argument's value read from the registers,
 * the stack or memory and stored binary in the record, as the kernel's ring buffer holds its
 * fields; record_text.c prints them when the trace is read. Every number is stored as a u64
 * (an array: one per element), its type's bits and bitfield taken out when it is printed; a
 * string as its length (or OKP_STORED_FAULT) and its bytes, padded to 8. \"STRING" stores
 * nothing (its format has it). Every memory read is a nofault read (user memory through the
 * user nofault reads); a number that cannot be read is stored as 0, as the kernel leaves its
 * field.
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

/* A string argument: its length (or OKP_STORED_FAULT) and bytes, at most room bytes in all. */
static int okp_store_string(const struct okp_fetch_arg *arg, struct pt_regs *regs, u8 *data,
			    int room)
{
	unsigned long addr;
	bool user = arg->kind == OKP_TYPE_USTRING;
	int max = min_t(int, room - (int)sizeof(s32), OKP_EV_MAX_STRING);
	char *text = (char *)data + sizeof(s32);
	long copied;

	if (arg->source == OKP_FETCH_IMMSTR)
		return 0;
	if (max < 1)
		return -ENOSPC;
	if (arg->source == OKP_FETCH_COMM) {
		copied = strscpy(text, current->comm, max);
		if (copied < 0)
			copied = max - 1;
	} else {
		if (arg->nderef) {
			if (okp_fetch_address(arg, regs, &addr))
				goto fault;
			user |= arg->deref[arg->nderef - 1].user;
		} else {
			addr = arg->param;
		}
		copied = okp_read_string(text, addr, max, user);
		if (copied < 0)
			goto fault;
	}
	*(s32 *)data = copied;
	return ALIGN(sizeof(s32) + copied, 8);
fault:
	*(s32 *)data = OKP_STORED_FAULT;
	return 8;
}
NOKPROBE_SYMBOL(okp_store_string);

/* One string at addr: its length (or OKP_STORED_FAULT) and bytes, at most room bytes. */
static int okp_store_string_at(unsigned long addr, bool user, u8 *data, int room)
{
	int max = min_t(int, room - (int)sizeof(s32), OKP_EV_MAX_STRING);
	long copied;

	if (max < 1)
		return -ENOSPC;
	copied = okp_read_string((char *)data + sizeof(s32), addr, max, user);
	if (copied < 0) {
		*(s32 *)data = OKP_STORED_FAULT;
		return 8;
	}
	*(s32 *)data = copied;
	return ALIGN(sizeof(s32) + copied, 8);
}
NOKPROBE_SYMBOL(okp_store_string_at);

/*
 * string[N], ustring[N]: N string pointers in memory where the last dereference would read
 * (the kernel reads each pointer as that dereference, kernel or user memory, and each string
 * from user memory for ustring only): N strings stored one after another, a pointer that
 * cannot be read stored as a fault.
 */
static int okp_store_string_array(const struct okp_fetch_arg *arg, struct pt_regs *regs,
				  u8 *data, int room)
{
	bool pointers_user = arg->deref[arg->nderef - 1].user;
	bool user = arg->kind == OKP_TYPE_USTRING;
	unsigned long addr, string;
	bool readable = !okp_fetch_address(arg, regs, &addr);
	unsigned int i;
	int used = 0, n;

	for (i = 0; i < arg->count; i++) {
		if (room - used < 8)
			return -ENOSPC;
		if (readable && !okp_read_memory(&string, addr + i * sizeof(string),
						 sizeof(string), pointers_user)) {
			n = okp_store_string_at(string, user, data + used, room - used);
			if (n < 0)
				return n;
		} else {
			*(s32 *)(data + used) = OKP_STORED_FAULT;
			n = 8;
		}
		used += n;
	}
	return used;
}
NOKPROBE_SYMBOL(okp_store_string_array);

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

/* One u64 per value: the argument's, or TYPE[N]'s N read one after another from memory. */
static int okp_store_values(const struct okp_fetch_arg *arg, struct pt_regs *regs, u8 *data,
			    int room)
{
	unsigned long addr = 0;
	bool user = arg->nderef && arg->deref[arg->nderef - 1].user;
	bool readable;
	unsigned int i, n = arg->count ?: 1;
	u64 *values = (u64 *)data;

	if ((int)(n * sizeof(u64)) > room)
		return -ENOSPC;
	if (!arg->nderef) {
		values[0] = okp_fetch_source(arg, regs);
		return sizeof(u64);
	}
	readable = !okp_fetch_address(arg, regs, &addr);
	for (i = 0; i < n; i++)
		values[i] = readable ? okp_read_sized(addr + i * arg->size, arg->size, user) : 0;
	return n * sizeof(u64);
}
NOKPROBE_SYMBOL(okp_store_values);

int okp_fetch_args_store(const struct okp_fetch_arg *args, unsigned int nargs,
			 struct pt_regs *regs, u8 *data, int room, u16 *nstored)
{
	int used = 0, n;
	unsigned int i;

	for (i = 0; i < nargs; i++) {
		const struct okp_fetch_arg *arg = &args[i];

		if ((arg->kind == OKP_TYPE_STRING || arg->kind == OKP_TYPE_USTRING) && arg->count)
			n = okp_store_string_array(arg, regs, data + used, room - used);
		else if (arg->kind == OKP_TYPE_STRING || arg->kind == OKP_TYPE_USTRING)
			n = okp_store_string(arg, regs, data + used, room - used);
		else
			n = okp_store_values(arg, regs, data + used, room - used);
		if (n < 0)
			break;
		used += n;
	}
	*nstored = i;
	return used;
}
NOKPROBE_SYMBOL(okp_fetch_args_store);
