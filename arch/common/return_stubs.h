/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The block of return stubs every arch with return probes lays out the same way
 * (src/core/return_probe.cpp): OKP_RET_STUBS stubs of OKP_RET_STUB_SIZE bytes from
 * okp_return_stubs, page aligned, in okprobes' text. A stub is held by one frame at a time; the
 * address a function returns to says which, with no lookup. What a stub and the common part it
 * goes on to do is the arch's (arch/<arch>/return_stubs.S); their count, size and layout are
 * here, for the assembler and for probe_arch.h alike.
 */
#ifndef OKP_COMMON_RETURN_STUBS_H
#define OKP_COMMON_RETURN_STUBS_H

#define OKP_RET_STUBS 16384
#define OKP_RET_STUB_SIZE 16

#ifdef __ASSEMBLY__
/*
 * The block: the arch's .S defines the assembler macro okp_return_stub (one stub, its index
 * okp_stub_index) before it uses this one; fill pads each stub to OKP_RET_STUB_SIZE. In
 * .kprobes.text: the kernel's kprobes refuse it (see core/hit_path.h).
 */
.macro okp_return_stub_block fill:req
	.section .kprobes.text, "ax"
	.balign 4096
	.globl okp_return_stubs
okp_return_stubs:
	.set okp_stub_index, 0
	.rept OKP_RET_STUBS
	.balign OKP_RET_STUB_SIZE, \fill
	okp_return_stub
	.set okp_stub_index, okp_stub_index + 1
	.endr
	.balign OKP_RET_STUB_SIZE, \fill
	.globl okp_return_stubs_end
okp_return_stubs_end:
.endm
#endif /* __ASSEMBLY__ */

#ifdef __cplusplus
#include "arch/common/arch_types.h"

extern "C" const okp::u8 okp_return_stubs[];

namespace okp::arch {

constexpr u32 kReturnStubs = OKP_RET_STUBS;
constexpr usize kReturnStubSize = OKP_RET_STUB_SIZE;
inline okp_addr_t return_stub_address(u32 index) {
  return reinterpret_cast<okp_addr_t>(okp_return_stubs) + index * kReturnStubSize;
}

}  // namespace okp::arch
#endif /* __cplusplus */

#endif /* OKP_COMMON_RETURN_STUBS_H */
