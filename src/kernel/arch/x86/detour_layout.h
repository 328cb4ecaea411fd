/* SPDX-License-Identifier: GPL-2.0 */
/*
 * struct pt_regs as detour_entry.S builds it, and the okp_cpu_state field it writes: offsets an
 * assembly file cannot take from C, checked against the C definitions in layout_checks.c.
 */
#ifndef OKP_X86_DETOUR_LAYOUT_H
#define OKP_X86_DETOUR_LAYOUT_H

#define OKP_PT_R15 0
#define OKP_PT_R14 8
#define OKP_PT_R13 16
#define OKP_PT_R12 24
#define OKP_PT_BP 32
#define OKP_PT_BX 40
#define OKP_PT_R11 48
#define OKP_PT_R10 56
#define OKP_PT_R9 64
#define OKP_PT_R8 72
#define OKP_PT_AX 80
#define OKP_PT_CX 88
#define OKP_PT_DX 96
#define OKP_PT_SI 104
#define OKP_PT_DI 112
#define OKP_PT_ORIG_AX 120
#define OKP_PT_IP 128
#define OKP_PT_CS 136
#define OKP_PT_FLAGS 144
#define OKP_PT_SP 152
#define OKP_PT_SS 160
#define OKP_PT_SIZE 168

/*
 * The detour's site word, from the copy's address (the pre entry's return address), and its
 * post-entry tag (arch/x86/detour.h: kDetourFlagsOffset - kDetourCopyOffset, kDetourHasPost;
 * checked there).
 */
#define OKP_DETOUR_SITE_FROM_COPY (-13)
#define OKP_DETOUR_HAS_POST 1

/* struct pcpu_hot (6.2 on): where the preempt count is (checked in detour.c). */
#define OKP_PCPU_HOT_PREEMPT_COUNT 8

#endif
