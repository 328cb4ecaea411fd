// SPDX-License-Identifier: GPL-2.0
// The x86-64 jump optimizer's region check: may the instructions under a 5-byte `jmp rel32`
// at a probe address move into a detour buffer? Decided on the whole containing function,
// decoded with Zydis from its start (bytes already recovered from under breakpoints):
//
//  - the region is the whole instructions covering 5 bytes from the probe address, inside
//    the function;
//  - no direct branch anywhere in the function (jmp, jcc, call, loop, jrcxz, xbegin) may land
//    strictly inside the region (on its first byte is fine: that is the jump itself);
//  - an indirect jump (`jmp *`, or a jump to a retpoline thunk, FunctionText::thunks) is
//    accepted only when it is proved to be a tail call: the stack is back
//    at its entry depth there, on every path that reaches it (tracked over the function's
//    control flow: push/pop, sub/add/lea of rsp, frame-pointer moves, leave); kernels built
//    with retpolines use -fno-jump-tables, so that is what their indirect jumps are. A jump
//    table (jump_table.h) is resolved first, whatever the depth: bounded by a cmp, every entry
//    inside the function and none strictly inside the region, or refused naming why. An
//    indirect jump that is neither may target the region: refused;
//  - in the region: a call only as the last instruction, no rel8-only branch (loop, jrcxz),
//    no int3 (padding or someone's breakpoint), nothing that ends the flow before the last
//    instruction, none of the instructions that cannot run from a copy;
//  - exception table: no faulting instruction in the region (its fixup is keyed by its
//    address), no fixup target inside it.
//
// The kernel's optprobes refuse any function with an indirect jump or an exception-table
// entry; this proves far more regions safe, and says exactly why when it does not.
// Registration-time only: it allocates a per-byte depth map with GFP_KERNEL.
#pragma once

#include "core/error_or.h"
#include "core/utility.h"
#include "seam/jump_services.h"
#include "seam/kernel_services.h"

namespace okp::x86 {

constexpr usize kJumpSize = 5;          // jmp rel32
constexpr usize kMaxRegionInsns = 5;    // 5 bytes are at most 5 instructions

// Text the kernel's retpolines live in (__x86_indirect_thunk_array and kin): a direct `jmp`
// (or jcc) there is an indirect jump through a register, as `jmp *%reg` is once alternatives
// inline it; a live kernel with retpolines on keeps the jump to the thunk.
struct AddrRange {
  okp_addr_t start, end;  // [start, end)
};
constexpr usize kMaxThunkRanges = 3;

// The containing function's text, with okprobes' and the kernel's breakpoints undone.
struct FunctionText {
  okp_addr_t start;
  const u8* bytes;
  usize size;
  const AddrRange* thunks = nullptr;  // the retpoline thunks (none: nullptr / 0)
  usize n_thunks = 0;
};

// An exception-table entry of the function: the instruction that may fault, where the fixup
// sends it.
struct ExtableEntry {
  okp_addr_t insn;
  okp_addr_t fixup;
};

struct RegionInsn {
  u32 offset;  // from the probe address
  u8 length;
  bool rip_relative;     // [rip+disp32]: the displacement is rewritten for the detour
  bool relative_branch;  // jmp/jcc rel: re-encoded rel32 to the same target
  bool is_call;          // only as the last instruction
  okp_addr_t target;     // relative_branch / is_call: where it goes
};

struct DetourRegion {
  okp_addr_t addr = 0;  // the probe address: the region's first byte
  u32 length = 0;       // >= kJumpSize
  u8 count = 0;
  RegionInsn insns[kMaxRegionInsns] = {};
};

// How much of fn's extent is code: all of it, less a run of zero bytes after its last
// instruction when that instruction ends the flow (ret, jmp, int3, ud2, ...). The extent runs
// up to the next symbol; after a section's last function that is the next section's, and the
// module loader fills the alignment gap between them with zeros, which decode as
// `add %al,(%rax)` two by two and, an odd run, end in a byte that does not decode. Cut at the
// first instruction boundary with only zeros after it; fn.size when there is none.
usize code_size(const FunctionText& fn);

// Whether the region at addr may be replaced by a jump; the error's reason names the
// instruction and offsets ("jcc at +0x3a jumps to +0x12, inside the region +0x10..+0x17").
ErrorOr<DetourRegion> check_detour_region(const FunctionText& fn, okp_addr_t addr,
                                          const ExtableEntry* extable, usize n_extable);

// --- Code around the function (its symbol may not be all of it) ---------------------------
// kallsyms names every global label: an assembly function's inner label splits it into
// "functions" that each see only a part, and GCC's foo.cold parts jump back into foo. The
// region check therefore also reads the symbols next to the function and the ones its jumps
// leave for.

// The first direct branch of other (not the function itself) that lands strictly inside
// [region_start, region_end); 0 when none does. Code that does not decode is an error.
ErrorOr<okp_addr_t> foreign_branch_into(const FunctionText& other, okp_addr_t region_start,
                                        okp_addr_t region_end);
// Whether execution runs on past fn's end: its last instruction (padding aside) neither
// returns, jumps, traps nor calls (a last call is to a function that does not return), and no
// padding separates it from the end.
bool runs_on_past_end(const FunctionText& fn);
// The distinct targets of fn's direct jumps (not calls) outside fn, at most max of them.
usize outside_jump_targets(const FunctionText& fn, okp_addr_t* out, usize max);

}  // namespace okp::x86
