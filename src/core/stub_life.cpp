// SPDX-License-Identifier: GPL-2.0
// The life cycle of return stubs and the return path (see stub_life.h).
#include "core/stub_life.h"

#include "core/cpu_frames.h"
#include "core/hit_path.h"
#include "seam/core_entries.h"

namespace okp {

constinit StubState g_stubs[arch::kReturnStubs > 0 ? arch::kReturnStubs : 1] = {};
constinit u32 g_stub_links[arch::kReturnStubs > 0 ? arch::kReturnStubs : 1] = {};
constinit IndexStack g_free_stubs = {0, g_stub_links};  // stubs no frame uses
constinit u32 g_stubs_high = 0;
constinit bool g_stubs_ready = false;  // registry lock

// Every registered probe's pool: changed under the registry lock, read under RCU (a pool is
// freed only after unregister's grace period).
constinit ReturnPool* g_pools = nullptr;
// At least the number of kDetached stubs (raised before a stub is detached, lowered after it
// is freed).
constinit long g_detached_live = 0;

// A frame the arch proves will never return through its stub (on x86-64: its stack slot holds
// neither the stub nor the index the stub pushes, or is unreadable, the stack of an exited
// task) is gone: the instance can be reclaimed.
OKP_HIT_PATH bool frame_is_gone(u32 index) {
  return !arch::frame_may_return(g_stubs[index].frame, index);
}

// Moves a stub in state `life` whose frame is gone to kFree; true if it did.
OKP_HIT_PATH bool try_reclaim(u32 index, StubLife life) {
  StubState& st = g_stubs[index];
  const u64 word = __atomic_load_n(&st.life, __ATOMIC_ACQUIRE);
  if (life_of(word) != life || !frame_is_gone(index)) return false;
  u64 expected = word;
  return __atomic_compare_exchange_n(&st.life, &expected, freed(word), false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED);
}

// A reclaimed stub (its frame will never return) goes where a return would put it.
OKP_HIT_PATH void give_back_reclaimed(u32 index, StubLife was) {
  if (was == kArmed) __atomic_fetch_add(&g_stubs[index].pool->rp->nreclaimed, 1, __ATOMIC_RELAXED);
  release_frame(index, was);
}

// The frame of stub index, if it belongs to task, can never return: task is being freed.
// The sequence in the life word makes a stub that was released and armed again for another
// task meanwhile fail the exchange.
void reclaim_if_owned_by(u32 index, const void* task) {
  StubState& st = g_stubs[index];
  u64 word = __atomic_load_n(&st.life, __ATOMIC_ACQUIRE);
  const StubLife was = life_of(word);
  if (was == kFree || __atomic_load_n(&st.task, __ATOMIC_RELAXED) != task) return;
  if (__atomic_compare_exchange_n(&st.life, &word, freed(word), false, __ATOMIC_ACQ_REL,
                                  __ATOMIC_RELAXED))
    give_back_reclaimed(index, was);
}

u32 reclaim_pool(ReturnPool* pool) {
  u32 n = 0;
  const u32 high = stubs_to_scan();
  for (u32 i = 0; i < high; ++i) {
    if (__atomic_load_n(&g_stubs[i].pool, __ATOMIC_RELAXED) != pool) continue;
    // A stub of another pool by now is reclaimed only if its frame is gone too: still right.
    if (!try_reclaim(i, kArmed)) continue;
    give_back_reclaimed(i, kArmed);
    ++n;
  }
  return n;
}

// Detached stubs (their probe unregistered while a frame still pointed at them) go back to
// the global stack when their frame returns; frames that never return are found here.
void reclaim_detached() {
  const u32 high = stubs_to_scan();
  for (u32 i = 0; i < high; ++i) {
    if (try_reclaim(i, kDetached)) give_back_reclaimed(i, kDetached);
  }
}

void init_stubs() {
  if (g_stubs_ready) return;
  // Index 0 on top: the stack hands out low indices first, which keeps g_stubs_high low.
  for (u32 i = arch::kReturnStubs; i > 0; --i) g_free_stubs.push(i - 1);
  g_stubs_ready = true;
}

void fill_pool(ReturnPool* pool) {
  for (u32 k = pool->ninstances; k > 0; --k) pool->free.push(k - 1);
}

OKP_HIT_PATH void count_rp_miss(okp_kretprobe* rp, okp_kretprobe_miss_cause cause) {
  __atomic_fetch_add(&rp->nmissed_by[cause], 1, __ATOMIC_RELAXED);
  if (cause == OKP_RP_MISS_POOL_EMPTY || cause == OKP_RP_MISS_NO_STUB)
    __atomic_fetch_add(&rp->nmissed, 1, __ATOMIC_RELAXED);
}

OKP_HIT_PATH bool rp_disabled(const okp_kretprobe* rp) {
  return __atomic_load_n(&rp->kp.flags, __ATOMIC_RELAXED) &
         (OKP_KPROBE_FLAG_DISABLED | OKP_KPROBE_FLAG_GONE);
}

}  // namespace okp

using namespace okp;

namespace {

// A return that runs no handler (nested in a handler or an interrupted one, or the probe
// disabled): counted by cause. Out of line: the common return has no miss.
[[gnu::noinline]] OKP_HIT_PATH void count_return_miss(okp_kretprobe* rp, unsigned int depth) {
  count_rp_miss(rp, depth > 0 ? OKP_RP_MISS_REENTRY : OKP_RP_MISS_DISABLED);
}

}  // namespace

// The trampoline's callback (preemption off: an RCU read side; arch/x86/return_stubs.S and
// src/kernel/return.c): runs the return handler for the frame of stub `index` and answers the
// real return address. Only the index and this CPU's state are kept across the handler's call;
// the return address is read again after it (the stub is ours until release_frame pushes it).
extern "C" OKP_HIT_PATH unsigned long okp_core_on_return(struct okp_regs* regs, unsigned long index,
                                            struct okp_cpu_state* cpu) {
  if (index >= arch::kReturnStubs) {
    okp_seam_invariant_failed("return stub index out of range", __FILE__, __LINE__);
    return 0;
  }
  StubState& st = g_stubs[index];
  arch::set_instruction_pointer(regs, st.ret_addr);
  const StubLife was = life_of(__atomic_fetch_and(&st.life, ~kLifeMask, __ATOMIC_ACQ_REL));
  if (__builtin_expect(was == kArmed, 1)) {
    // Unregister's grace period waits for us (preemption is off) before it frees the pool.
    okp_kretprobe* rp = st.pool->rp;
    const unsigned int depth = cpu->depth;
    if (depth > 0 || rp_disabled(rp)) {
      count_return_miss(rp, depth);
    } else if (rp->handler) {
      // An idle CPU: frame 0 by the count alone, as the breakpoint and ftrace hits open it
      // (core/cpu_frames.h): a return's kHandlers frame is never read.
      open_first_frame(cpu);
      rp->handler(st.instance, reinterpret_cast<pt_regs*>(regs));
      close_first_frame(cpu);
    }
    const unsigned long ret_addr = g_stubs[index].ret_addr;
    release_frame(static_cast<u32>(index), kArmed);
    return ret_addr;
  }
  // Read before the exchange, as regs->ip holds it (a stub found free may be anyone's now).
  const unsigned long ret_addr = arch::instruction_pointer(regs);
  if (was == kFree) {
    okp_seam_invariant_failed("a live frame's return stub was not in use", __FILE__, __LINE__);
    return ret_addr;
  }
  // kDetached: the probe is gone, no handler; the stub alone goes back.
  release_frame(static_cast<u32>(index), kDetached);
  return ret_addr;
}

// A frame hooked through the kernel's rethook returned and its handler did not run
// (src/kernel/rethook.c runs it, preemption off): counted by cause, as at a stub's return.
extern "C" OKP_HIT_PATH void okp_core_rethook_return_missed(struct okp_kretprobe* rp,
                                                            unsigned int depth) {
  count_rp_miss(rp, depth > 0 ? OKP_RP_MISS_REENTRY : OKP_RP_MISS_DISABLED);
}

// Whether addr is where one of the return stubs starts: what a diverted return-address slot
// holds (is_kretprobe_trampoline()'s question, one address per stub).
extern "C" OKP_HIT_PATH int okp_core_is_return_stub(unsigned long addr) {
  const okp_addr_t base = arch::return_stub_address(0);
  return arch::kReturnStubs != 0 && addr >= base &&
         addr < base + arch::kReturnStubs * arch::kReturnStubSize &&
         (addr - base) % arch::kReturnStubSize == 0;
}

extern "C" OKP_HIT_PATH unsigned long okp_core_kretprobe_find_ret_addr(void* task, unsigned long addr) {
  const okp_addr_t base = arch::return_stub_address(0);
  if (arch::kReturnStubs == 0 || addr < base ||
      addr >= base + arch::kReturnStubs * arch::kReturnStubSize)
    return addr;
  const u32 index = static_cast<u32>((addr - base) / arch::kReturnStubSize);
  const StubState& st = g_stubs[index];
  if (life_of(__atomic_load_n(&st.life, __ATOMIC_ACQUIRE)) == kFree) return addr;
  if (task && __atomic_load_n(&st.task, __ATOMIC_RELAXED) != task) return addr;
  return st.ret_addr;
}

// A task is freed (its last reference is gone, RCU read side held by the glue): every frame
// it still held an instance for is dead (it exited inside the function, or unwound past it).
// Without this, an exited task's instance stays taken while its cached stack still holds
// the stub. Walks the stubs ever armed (frames of registered and of unregistered probes).
extern "C" void okp_core_on_task_free(void* task) {
  const u32 high = stubs_to_scan();
  for (u32 i = 0; i < high; ++i) reclaim_if_owned_by(i, task);
}

// Stubs in use now (all pools and detached ones): KUnit and the stress test check it returns
// to zero once every probe is unregistered and every frame returned.
// Frames hooked through the kernel's rethook count too (their pools' in_use; a frame whose
// task was freed inside the function counts until the kernel hands its node out again). The
// caller holds an RCU read side (the pools), takes no lock: tests call it under stop_machine.
extern "C" int okp_core_detached_stubs_live(void) {
  return __atomic_load_n(&g_detached_live, __ATOMIC_ACQUIRE) > 0;
}

extern "C" unsigned long okp_core_return_stubs_in_use(void) {
  unsigned long n = 0;
  const u32 high = stubs_to_scan();
  for (u32 i = 0; i < high; ++i)
    n += life_of(__atomic_load_n(&g_stubs[i].life, __ATOMIC_RELAXED)) != kFree;
  for (ReturnPool* pool = __atomic_load_n(&g_pools, __ATOMIC_ACQUIRE); pool;
       pool = __atomic_load_n(&pool->next, __ATOMIC_ACQUIRE))
    if (pool->head.rethook) n += __atomic_load_n(&pool->head.in_use, __ATOMIC_RELAXED);
  return n;
}
