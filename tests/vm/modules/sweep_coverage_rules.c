// SPDX-License-Identifier: GPL-2.0
/*
 * okp_sweep's coverage mode: why the kernel's kprobes would not optimize a boundary, inferred
 * from its rules (arch/x86/kernel/kprobes/{core,opt}.c of 6.1) with its own decoder, and how
 * the symbol before a function ends (okprobes' "runs on into the function" refusals).
 */
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/inat.h>
#include <asm/insn.h>
#include <linux/kprobes.h>
#include <okprobes/okprobes.h>
#include "sweep.h"
#include "sweep_coverage.h"

/* --- the kernel's rules (arch/x86/kernel/kprobes/{core,opt}.c of 6.1), for the reasons ---- */

#define W(row, b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, ba, bb, bc, bd, be, bf)		\
	(((b0##UL << 0x0)|(b1##UL << 0x1)|(b2##UL << 0x2)|(b3##UL << 0x3) |		\
	  (b4##UL << 0x4)|(b5##UL << 0x5)|(b6##UL << 0x6)|(b7##UL << 0x7) |		\
	  (b8##UL << 0x8)|(b9##UL << 0x9)|(ba##UL << 0xa)|(bb##UL << 0xb) |		\
	  (bc##UL << 0xc)|(bd##UL << 0xd)|(be##UL << 0xe)|(bf##UL << 0xf))		\
	 << (row % 32))
/* The kernel's twobyte_is_boostable, copied. */
static const u32 twobyte_is_boostable[256 / 32] = {
	W(0x00, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0) |
	W(0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1) ,
	W(0x20, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0) |
	W(0x30, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0) ,
	W(0x40, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1) |
	W(0x50, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0) ,
	W(0x60, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1) |
	W(0x70, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1) ,
	W(0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0) |
	W(0x90, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1) ,
	W(0xa0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 1, 0, 1) |
	W(0xb0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1) ,
	W(0xc0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1) |
	W(0xd0, 0, 1, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 1, 1, 0, 1) ,
	W(0xe0, 0, 1, 1, 0, 0, 1, 0, 0, 1, 1, 0, 1, 1, 1, 0, 1) |
	W(0xf0, 0, 1, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0)
};
#undef W

/* NULL when the kernel's can_boost() (without its exception-table test) accepts insn. */
static const char *not_boostable(struct insn *insn, char *buf, size_t len)
{
	insn_byte_t prefix;
	u8 op = insn->opcode.bytes[0];
	int i;

	if (insn->opcode.nbytes == 2) {
		u8 op2 = insn->opcode.bytes[1];

		if (twobyte_is_boostable[op2 / 32] & (1u << (op2 % 32)))
			return NULL;
		if ((op2 & 0xf0) == 0x80)
			return "jcc";
		snprintf(buf, len, "two-byte opcode 0f %02x", op2);
		return buf;
	}
	if (insn->opcode.nbytes != 1)
		return "three-byte opcode";
	for_each_insn_prefix(insn, i, prefix) {
		if (prefix == 0x2e || inat_is_address_size_prefix(inat_get_opcode_attribute(prefix)))
			return "cs or address-size prefix";
	}
	switch (op) {
	case 0x70 ... 0x7f:
		return "jcc";
	case 0xe8:
		return "call";
	case 0xe9:
	case 0xeb:
		return "jmp";
	case 0xc0 ... 0xc1:
	case 0xd0 ... 0xd3:
		return "shift/rotate (grp2)";
	case 0xf6 ... 0xf7:
		return "test/not/neg/mul/div (grp3)";
	case 0xfe:
		return "inc/dec of a byte (grp4)";
	case 0xcc ... 0xce:
		return "int3/int/into";
	case 0xe0 ... 0xe3:
		return "loop/jrcxz";
	case 0xf0 ... 0xf4:
		return "lock/rep/hlt";
	case 0x62:
	case 0x9a:
	case 0xd6:
	case 0xd8 ... 0xdf:
		snprintf(buf, len, "opcode %02x", op);
		return buf;
	case 0xff:
		if (X86_MODRM_REG(insn->modrm.bytes[0]) == 4)
			return NULL;
		return X86_MODRM_REG(insn->modrm.bytes[0]) == 2 ? "indirect call (grp5)" : "grp5";
	default:
		return NULL;
	}
}

bool cov_decode(const struct sweep_func *f, unsigned int off, struct insn *insn)
{
	return insn_decode(insn, f->orig + off, f->size + SLACK - off, INSN_MODE_64) >= 0 &&
	       insn->length;
}

/* The function's relative branches, and its first indirect jump the kernel would see. */
int cov_scan_function(struct sweep_func *f, struct cov_func *c)
{
	unsigned int off, cap = 0;
	struct insn insn;
	char sym[KSYM_SYMBOL_LEN];

	c->indirect = ~0u;
	for (off = 0; off < f->decoded; off = find_next_bit(f->boundary, f->decoded, off + 1)) {
		u8 op, op2;
		bool krange, call;
		unsigned long target;

		if (!cov_decode(f, off, &insn))
			break;
		op = insn.opcode.bytes[0];
		op2 = insn.opcode.bytes[1];
		if (c->indirect == ~0u && ((op == 0xff && (X86_MODRM_REG(insn.modrm.value) & 6) == 4) ||
					  op == 0xea)) {
			c->indirect = off;
			strscpy(c->indirect_what, "an indirect jump", sizeof(c->indirect_what));
		}
		krange = (op >= 0xe0 && op <= 0xe3) || op == 0xe9 || op == 0xeb ||
			 (op >= 0x70 && op <= 0x7f) || (op == 0x0f && (op2 & 0xf0) == 0x80);
		call = op == 0xe8;
		if (!krange && !call)
			continue;
		target = f->addr + off + insn.length + insn.immediate.value;
		if (krange && c->indirect == ~0u &&
		    (target < f->addr || target >= f->addr + f->size)) {
			char *plus;

			sprint_symbol(sym, target);
			plus = strchr(sym, '+');
			if (plus)
				*plus = '\0';
			/* __indirect_thunk_start..end: the retpoline and return thunks */
			if (strstr(sym, "thunk") || strstarts(sym, "srso_") ||
			    strstarts(sym, "retbleed_") || strstarts(sym, "entry_untrain_ret")) {
				c->indirect = off;
				snprintf(c->indirect_what, sizeof(c->indirect_what), "a jump to %s", sym);
			}
		}
		if (c->nbr == cap) {
			struct cov_branch *n;

			cap = cap ? cap * 2 : 16;
			n = kvmalloc_array(cap, sizeof(*n), GFP_KERNEL);
			if (!n)
				return -ENOMEM;
			if (c->br)
				memcpy(n, c->br, c->nbr * sizeof(*n));
			kvfree(c->br);
			c->br = n;
		}
		c->br[c->nbr].off = off;
		c->br[c->nbr].call = call;
		c->br[c->nbr].target = target;
		c->nbr++;
	}
	return 0;
}

/*
 * Why the kernel's rules refuse to optimize f+off (NULL: they would optimize it), in the order
 * the kernel checks: can_optimize() decodes the whole function and stops at the first
 * instruction that is an indirect jump (or a jump to a thunk) or jumps into [addr+1, addr+5];
 * then copy_optimized_instructions() needs every instruction of the region boostable.
 */
const char *cov_kernel_rule(const struct sweep_func *f, const struct cov_func *c,
			       unsigned int off, char *buf, size_t len)
{
	unsigned long start = f->addr + off + 1, first_into = ~0ul;
	unsigned int i, r;
	struct insn insn;

	if (f->size - off < 5)
		return "fewer than 5 bytes to the function's end";
	for (i = 0; i < c->nbr; i++) {
		if (!c->br[i].call && c->br[i].target >= start && c->br[i].target <= start + 4) {
			first_into = c->br[i].off;
			break;
		}
	}
	if (c->indirect != ~0u && c->indirect < first_into) {
		snprintf(buf, len, "the function has %s (counted as an indirect jump)",
			 c->indirect_what);
		return buf;
	}
	if (first_into != ~0ul)
		return "a jump into the 4 bytes after the probe";
	for (r = off; r < off + 5 && r < f->decoded; r += insn.length) {
		char what[40];
		const char *why;

		if (!cov_decode(f, r, &insn))
			return "the region does not decode";
		why = not_boostable(&insn, what, sizeof(what));
		if (why) {
			snprintf(buf, len, "the region has an instruction it cannot boost: %s", why);
			return buf;
		}
	}
	return NULL;
}

/*
 * How the symbol just before f ends, by the kernel's decoder: okprobes refuses a function whose
 * predecessor "runs on into" it (its last instruction does not end the flow), taking the
 * function's symbol for an inner label. A last call to a noreturn function (__stack_chk_fail,
 * panic) does not run on.
 */
const char *cov_symbol_before_end(const struct sweep_func *f, struct cov_func *c)
{
	char sym[KSYM_SYMBOL_LEN], *plus, *slash;
	unsigned long off, size, start, last = 0, at;
	struct insn insn;
	u8 *text;

	if (c->before_end[0])
		return c->before_end;
	strscpy(c->before_end, "(unknown)", sizeof(c->before_end));
	sprint_symbol(sym, f->addr - 1);
	plus = strrchr(sym, '+');
	slash = plus ? strchr(plus, '/') : NULL;
	if (!plus || !slash)
		return c->before_end;
	*slash = '\0';
	if (kstrtoul(plus + 1, 16, &off) || kstrtoul(slash + 1, 16, &size) || size > 65536)
		return c->before_end;
	start = f->addr - 1 - off;
	text = kvmalloc(size + SLACK, GFP_KERNEL);
	if (!text || copy_from_kernel_nofault(text, (void *)start, size + SLACK)) {
		kvfree(text);
		return c->before_end;
	}
	for (at = 0; at < size; at += insn.length) {
		if (insn_decode(&insn, text + at, size + SLACK - at, INSN_MODE_64) < 0 ||
		    !insn.length) {
			snprintf(c->before_end, sizeof(c->before_end), "(does not decode)");
			kvfree(text);
			return c->before_end;
		}
		last = at;
	}
	insn_decode(&insn, text + last, size + SLACK - last, INSN_MODE_64);
	if (insn.opcode.bytes[0] == 0xe8) {
		sprint_symbol(sym, start + last + insn.length + insn.immediate.value);
		plus = strchr(sym, '+');
		if (plus)
			*plus = '\0';
		snprintf(c->before_end, sizeof(c->before_end), "call %s", sym);
	} else {
		snprintf(c->before_end, sizeof(c->before_end), "%*ph", insn.length, text + last);
	}
	kvfree(text);
	return c->before_end;
}
