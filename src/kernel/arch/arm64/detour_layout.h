/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What detour_entry.S and detour.c agree on: the frame the entries build (a struct pt_regs,
 * checked in detour.c, then a frame record) and the places of its fields.
 */
#ifndef OKP_ARM64_DETOUR_LAYOUT_H
#define OKP_ARM64_DETOUR_LAYOUT_H

#define OKP_DETOUR_FRAME 384		/* pt_regs, the rest zeroed, then the frame record */
#define OKP_DETOUR_RECORD (OKP_DETOUR_FRAME - 16)
#define OKP_PT_LR (30 * 8)
#define OKP_PT_SP (31 * 8)
#define OKP_PT_PC (32 * 8)
#define OKP_PT_PSTATE (33 * 8)
#define OKP_PT_TAIL (34 * 8)		/* orig_x0 on: zeroed, as no syscall or exception */
#define OKP_PSR_MODE_EL1H 5
/* The detour's probe address, from the pre entry's return address (detour+28: detour.h). */
#define OKP_DETOUR_ADDR_FROM_RET (-28)

#endif /* OKP_ARM64_DETOUR_LAYOUT_H */
