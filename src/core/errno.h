// SPDX-License-Identifier: GPL-2.0
// Error numbers the core returns. The values are Linux's (asm-generic, shared by x86-64,
// arm64 and riscv64); src/kernel/layout_checks.c static-asserts each against <linux/errno.h>.
#pragma once

namespace okp {

enum class Errno : int {
  kPerm = 1,              // EPERM
  kNoEnt = 2,             // ENOENT: no such symbol / probe
  k2Big = 7,              // E2BIG: a return probe's data_size over KRETPROBE_MAX_DATA_SIZE
  kNoMem = 12,            // ENOMEM
  kFault = 14,            // EFAULT
  kBusy = 16,             // EBUSY: another patcher owns the address
  kExist = 17,            // EEXIST: already registered
  kInval = 22,            // EINVAL: bad argument
  kNoSpc = 28,            // ENOSPC
  kRange = 34,            // ERANGE
  kIlSeq = 84,            // EILSEQ: not an instruction boundary
  kOpNotSupp = 95,        // EOPNOTSUPP
  kAddrNotAvail = 99,     // EADDRNOTAVAIL: ambiguous symbol
};

// Negative errno, as the kernel's C API returns it.
constexpr int to_kernel_errno(Errno e) { return -static_cast<int>(e); }

// A kernel function's negative errno, mapped into the declared set: one the core does not
// declare becomes kInval (the caller's reason still says what failed).
constexpr Errno from_kernel_errno(int negative) {
  switch (-negative) {
    case 1: return Errno::kPerm;
    case 2: return Errno::kNoEnt;
    case 7: return Errno::k2Big;
    case 12: return Errno::kNoMem;
    case 14: return Errno::kFault;
    case 16: return Errno::kBusy;
    case 17: return Errno::kExist;
    case 22: return Errno::kInval;
    case 28: return Errno::kNoSpc;
    case 34: return Errno::kRange;
    case 84: return Errno::kIlSeq;
    case 95: return Errno::kOpNotSupp;
    case 99: return Errno::kAddrNotAvail;
    default: return Errno::kInval;
  }
}

}  // namespace okp
