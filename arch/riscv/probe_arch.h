// SPDX-License-Identifier: GPL-2.0
// riscv64 arch traits: the ebreak backend is a later issue.
#pragma once
#define OKP_ARCH_NAME "riscv64"
#include "arch/common/probe_arch_unsupported.h"
