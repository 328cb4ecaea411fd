// SPDX-License-Identifier: GPL-2.0
// Return stubs, the core's side: each stub's state and life cycle (free -> armed -> free at its
// return or reclaim; detached after unregister), the pools that own them, the return path the
// stub's trampoline calls, and the reclaim of frames that never return. return_probe.cpp holds
// the API on top. Internal to the core.
#pragma once

#include <okprobes/okprobes.h>

#include "arch/arch_contract.h"
#include "core/index_stack.h"
#include "core/utility.h"

namespace okp {

struct StubLinks {
  static u32* link(u32 index);
};
// Free stubs: a lock-free stack of stub indices, linked through StubState::next_free.
using StubStack = IndexStack<StubLinks>;

// A pool: the stubs a return probe owns and the instances they stand for. With rethook set,
// the probe's returns go through the kernel's rethook instead (src/kernel/rethook.c): the
// instances are its nodes, there are no stubs (stub_index and instances are null), and the
// pool is on no g_pools list (the kernel reclaims a freed task's nodes itself).
struct ReturnPool {
  okp_kretprobe* rp;
  ReturnPool* next;           // g_pools link: registry lock to change, RCU to read
  StubStack free;
  u32 nstubs;                 // instances (maxactive), stubs or rethook nodes
  u32 in_use;                 // atomic: instances in use now
  usize instance_size;
  u32* stub_index;            // [nstubs]
  u8* instances;              // nstubs * instance_size
  void* rethook;              // the kernel's struct rethook, or null: okprobes' stubs
};

// A stub's life: kFree (on a pool's or the global free stack) -> kArmed (a frame of a
// registered probe points at it) -> kFree at its return or reclaim. Unregister turns kArmed
// into kDetached: the frame still returns through it, with no handler, and the stub goes to
// the global stack. Every move out of kArmed or kDetached is one atomic exchange or
// compare-exchange, so a return and a reclaim never both release a stub.
enum StubLife : u32 { kFree = 0, kArmed = 1, kDetached = 2 };

// Per stub, global and never freed (see return_probe.h).
struct StubState {
  ReturnPool* pool;                // while registered; followed only by whoever moves it out
                                   // of kArmed (an RCU read side keeps the pool alive)
  okp_kretprobe_instance* instance;  // in the pool; null once its probe is unregistered
  unsigned long ret_addr;          // the real return address of the frame using it
  unsigned long frame;             // the stack slot that held ret_addr (now holds the stub)
  void* task;                      // the task whose frame it is (only compared, never followed)
  u32 next_free;                   // StubStack link (index + 1)
  u32 life;                        // StubLife
};

extern StubState g_stubs[arch::kReturnStubs > 0 ? arch::kReturnStubs : 1];
extern StubStack g_free_stubs;  // stubs no pool holds
extern bool g_stubs_ready;      // registry lock
// Every registered probe's pool, for the task-free reclaim: changed under the registry lock,
// read under RCU (a pool is freed only after unregister's grace period).
extern ReturnPool* g_pools;
// At least the number of kDetached stubs (raised before a stub is detached, lowered after it
// is freed). While it is above zero the task-free reclaim scans every stub, not just the
// registered pools'.
extern long g_detached_live;

inline u32* StubLinks::link(u32 index) { return &g_stubs[index].next_free; }

// Inline (a single load; always inlined, so no out-of-line copy lands outside .kprobes.text).
[[gnu::always_inline]] inline ReturnPool* pool_of(const okp_kretprobe* rp) {
  return static_cast<ReturnPool*>(__atomic_load_n(&rp->okp_pool, __ATOMIC_ACQUIRE));
}
bool rp_disabled(const okp_kretprobe* rp);
void count_rp_miss(okp_kretprobe* rp, okp_kretprobe_miss_cause cause);
bool frame_is_gone(u32 index);
bool try_reclaim(u32 index, StubLife life);
void give_back_reclaimed(u32 index, u32 was);
void reclaim_if_owned_by(u32 index, const void* task);
// Reclaims the armed stubs of pool whose frames are gone (registry lock or RCU read side).
u32 reclaim_pool(ReturnPool* pool);
// Detached stubs whose frames are gone go back to the global stack (registry lock).
void reclaim_detached();
void init_stubs();
bool stub_take_global(u32* index);
// Returns stubs [0, n) of pool to the global stack (registration failed).
void release_stubs(ReturnPool* pool, u32 n);
// Gives pool `want` stubs from the global stack (registry lock held); -ENOSPC, with none
// taken, when there are not enough.
int take_stubs(ReturnPool* pool, u32 want);

}  // namespace okp
