/* SPDX-License-Identifier: GPL-2.0 */
/*
 * okprobes public C API for client modules. It mirrors <linux/kprobes.h> name for name with
 * an okp_ prefix (the probe API arrives with the x86-64 breakpoint-probe work); see
 * docs/api.md and docs/client-modules.md for how to build against it.
 */
#ifndef OKPROBES_OKPROBES_H
#define OKPROBES_OKPROBES_H

/* Bumped on any incompatible change of this header. */
#define OKP_API_VERSION 1

/* The API version of the loaded okprobes.ko; a client compares it with OKP_API_VERSION. */
unsigned int okp_api_version(void);

#endif /* OKPROBES_OKPROBES_H */
