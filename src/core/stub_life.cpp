// SPDX-License-Identifier: GPL-2.0
// The life cycle of return stubs and the return path (see stub_life.h).
#include "core/stub_life.h"

#include "core/cpu_frames.h"
#include "core/hit_path.h"
#include "seam/core_entries.h"

namespace okp {

constinit StubState g_stubs[arch::kReturnStubs > 0 ? arch::kReturnStubs : 1] = {};
constinit StubStack g_free_stubs;  // stubs no pool holds
constinit bool g_stubs_ready = false;  // registry lock

// Every registered probe's pool, for the task-free reclaim: changed under the registry lock,
// read under RCU (a pool is freed only after unregister's grace period).
constinit ReturnPool* g_pools = nullptr;
// At least the number of kDetached stubs (raised before a stub is detached, lowered after it
// is freed). While it is above zero the task-free reclaim scans every stub, not just the
// registered pools'.
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
  if (__atomic_load_n(&st.life, __ATOMIC_ACQUIRE) != life || !frame_is_gone(index)) return false;
  u32 expected = life;
  return __atomic_compare_exchange_n(&st.life, &expected, kFree, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED);
}

// A reclaimed stub (its frame will never return) goes where a return would put it: back to
// its probe's pool (it was kArmed: the caller's RCU read side or registry lock keeps the pool
// alive), or to the global stack (it was kDetached).
OKP_HIT_PATH void give_back_reclaimed(u32 index, u32 was) {
  if (was == kDetached) {
    g_free_stubs.push(index);
    __atomic_fetch_sub(&g_detached_live, 1, __ATOMIC_RELEASE);
    return;
  }
  ReturnPool* pool = g_stubs[index].pool;
  __atomic_fetch_sub(&pool->in_use, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&pool->rp->nreclaimed, 1, __ATOMIC_RELAXED);
  pool->free.push(index);
}

// The frame of stub index, if it belongs to task, can never return: task is being freed.
void reclaim_if_owned_by(u32 index, const void* task) {
  StubState& st = g_stubs[index];
  u32 was = __atomic_load_n(&st.life, __ATOMIC_ACQUIRE);
  if (was == kFree || __atomic_load_n(&st.task, __ATOMIC_RELAXED) != task) return;
  if (__atomic_compare_exchange_n(&st.life, &was, kFree, false, __ATOMIC_ACQ_REL,
                                  __ATOMIC_RELAXED))
    give_back_reclaimed(index, was);
}

u32 reclaim_pool(ReturnPool* pool) {
  u32 n = 0;
  for (u32 k = 0; k < pool->nstubs; ++k) {
    const u32 index = pool->stub_index[k];
    if (!try_reclaim(index, kArmed)) continue;
    give_back_reclaimed(index, kArmed);
    ++n;
  }
  return n;
}

// Detached stubs (their probe unregistered while a frame still pointed at them) go back to
// the global stack when their frame returns; frames that never return are found here.
void reclaim_detached() {
  for (u32 i = 0; i < arch::kReturnStubs; ++i) {
    if (try_reclaim(i, kDetached)) give_back_reclaimed(i, kDetached);
  }
}

void init_stubs() {
  if (g_stubs_ready) return;
  for (u32 i = arch::kReturnStubs; i > 0; --i) g_free_stubs.push(i - 1);
  g_stubs_ready = true;
}

// Returns stubs [0, n) of pool to the global stack (registration failed).
OKP_HIT_PATH void release_stubs(ReturnPool* pool, u32 n) {
  for (u32 k = 0; k < n; ++k) {
    StubState& st = g_stubs[pool->stub_index[k]];
    st.pool = nullptr;
    st.instance = nullptr;
    g_free_stubs.push(pool->stub_index[k]);
  }
}

// Gives pool `want` stubs from the global stack (registry lock held); -ENOSPC, with none
// taken, when there are not enough.
int take_stubs(ReturnPool* pool, u32 want) {
  u32 got = 0;
  for (; got < want; ++got) {
    u32 index;
    if (!stub_take_global(&index)) {
      reclaim_detached();
      if (!stub_take_global(&index)) break;
    }
    pool->stub_index[got] = index;
    StubState& st = g_stubs[index];
    st.instance = reinterpret_cast<okp_kretprobe_instance*>(pool->instances + got * pool->instance_size);
    st.life = kFree;
    st.pool = pool;
  }
  if (got < want) {
    release_stubs(pool, got);
    return to_kernel_errno(Errno::kNoSpc);
  }
  for (u32 k = want; k > 0; --k) pool->free.push(pool->stub_index[k - 1]);
  return 0;
}

OKP_HIT_PATH bool stub_take_global(u32* index) { return g_free_stubs.pop(index); }

OKP_HIT_PATH void count_rp_miss(okp_kretprobe* rp, okp_kretprobe_miss_cause cause) {
  __atomic_fetch_add(&rp->nmissed_by[cause], 1, __ATOMIC_RELAXED);
  if (cause == OKP_RP_MISS_POOL_EMPTY) __atomic_fetch_add(&rp->nmissed, 1, __ATOMIC_RELAXED);
}

OKP_HIT_PATH bool rp_disabled(const okp_kretprobe* rp) {
  return __atomic_load_n(&rp->kp.flags, __ATOMIC_RELAXED) &
         (OKP_KPROBE_FLAG_DISABLED | OKP_KPROBE_FLAG_GONE);
}

}  // namespace okp

using namespace okp;

// The trampoline's callback (preemption off: an RCU read side, see src/kernel/return.c): runs the return
// handler for the frame of stub `index` and answers the real return address.
extern "C" OKP_HIT_PATH unsigned long okp_core_on_return(struct okp_regs* regs, unsigned long index,
                                            struct okp_cpu_state* cpu) {
  if (index >= arch::kReturnStubs) {
    okp_seam_invariant_failed("return stub index out of range", __FILE__, __LINE__);
    return 0;
  }
  StubState& st = g_stubs[index];
  const unsigned long ret_addr = st.ret_addr;  // before the stub can be reused
  arch::set_instruction_pointer(regs, ret_addr);
  const u32 was = __atomic_exchange_n(&st.life, kFree, __ATOMIC_ACQ_REL);
  if (was == kFree) {
    okp_seam_invariant_failed("a live frame's return stub was not in use", __FILE__, __LINE__);
    return ret_addr;
  }
  if (was == kDetached) {  // the probe is gone: no handler, the stub goes back to the global stack
    g_free_stubs.push(static_cast<u32>(index));
    __atomic_fetch_sub(&g_detached_live, 1, __ATOMIC_RELEASE);
    return ret_addr;
  }
  // kArmed: unregister's grace period waits for us (preemption is off) before it frees the pool.
  ReturnPool* pool = st.pool;
  okp_kretprobe* rp = pool->rp;
  if (cpu->depth > 0) {
    count_rp_miss(rp, OKP_RP_MISS_REENTRY);
  } else if (rp_disabled(rp)) {
    count_rp_miss(rp, OKP_RP_MISS_DISABLED);
  } else if (rp->handler && push_frame(cpu, nullptr, kHandlers)) {
    rp->handler(st.instance, reinterpret_cast<pt_regs*>(regs));
    pop_frame(cpu);
  }
  __atomic_fetch_sub(&pool->in_use, 1, __ATOMIC_RELAXED);
  pool->free.push(static_cast<u32>(index));
  return ret_addr;
}

// A frame hooked through the kernel's rethook returned (src/kernel/rethook.c; preemption
// off, inside the kernel's trampoline): the return handler runs as at a stub's return. The
// kernel puts the instance back in its pool after this. Unregister calls rethook_free() (no
// handler is called after it) and waits a grace period before the pool is freed, so pool and
// rp are alive here.
extern "C" OKP_HIT_PATH void okp_core_on_rethook_return(struct okp_kretprobe_instance* ri,
                                                        struct okp_regs* regs,
                                                        struct okp_cpu_state* cpu) {
  okp_kretprobe* rp = ri->rp;
  ReturnPool* pool = pool_of(rp);
  if (!pool) return;
  if (cpu->depth > 0) {
    count_rp_miss(rp, OKP_RP_MISS_REENTRY);
  } else if (rp_disabled(rp)) {
    count_rp_miss(rp, OKP_RP_MISS_DISABLED);
  } else if (rp->handler && push_frame(cpu, nullptr, kHandlers)) {
    rp->handler(ri, reinterpret_cast<pt_regs*>(regs));
    pop_frame(cpu);
  }
  __atomic_fetch_sub(&pool->in_use, 1, __ATOMIC_RELAXED);
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
  if (__atomic_load_n(&st.life, __ATOMIC_ACQUIRE) == kFree) return addr;
  if (task && __atomic_load_n(&st.task, __ATOMIC_RELAXED) != task) return addr;
  return st.ret_addr;
}

// A task is freed (its last reference is gone, RCU read side held by the glue): every frame
// it still held an instance for is dead (it exited inside the function, or unwound past it).
// Without this, an exited task's instance stays taken while its cached stack still holds
// the stub. Walks the registered pools, and every stub only while detached frames exist.
extern "C" void okp_core_on_task_free(void* task) {
  for (ReturnPool* pool = __atomic_load_n(&g_pools, __ATOMIC_ACQUIRE); pool;
       pool = __atomic_load_n(&pool->next, __ATOMIC_ACQUIRE)) {
    if (pool->rethook) continue;  // the kernel's rethook_flush_task() takes those back
    for (u32 k = 0; k < pool->nstubs; ++k) reclaim_if_owned_by(pool->stub_index[k], task);
  }
  if (__atomic_load_n(&g_detached_live, __ATOMIC_ACQUIRE) <= 0) return;
  for (u32 i = 0; i < arch::kReturnStubs; ++i) {
    if (__atomic_load_n(&g_stubs[i].life, __ATOMIC_RELAXED) == kDetached)
      reclaim_if_owned_by(i, task);
  }
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
  for (u32 i = 0; i < arch::kReturnStubs; ++i)
    n += __atomic_load_n(&g_stubs[i].life, __ATOMIC_RELAXED) != kFree;
  for (ReturnPool* pool = __atomic_load_n(&g_pools, __ATOMIC_ACQUIRE); pool;
       pool = __atomic_load_n(&pool->next, __ATOMIC_ACQUIRE))
    if (pool->rethook) n += __atomic_load_n(&pool->in_use, __ATOMIC_RELAXED);
  return n;
}
