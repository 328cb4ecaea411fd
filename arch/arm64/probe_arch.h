// SPDX-License-Identifier: GPL-2.0
// arm64 arch traits: the BRK backend is a later issue.
#pragma once
#define OKP_ARCH_NAME "arm64"
#include "arch/common/probe_arch_unsupported.h"
