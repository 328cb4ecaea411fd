// SPDX-License-Identifier: GPL-2.0
// Return stubs, the core's side: each stub's state and life cycle (free -> armed -> free at its
// return or reclaim; detached after unregister), the pools of instances, the return path the
// stub's trampoline calls, and the reclaim of frames that never return. return_probe.cpp holds
// the API on top. Internal to the core.
#pragma once

#include <okprobes/okprobes.h>

#include "arch/arch_contract.h"
#include "core/index_stack.h"
#include "core/utility.h"
#include "seam/kernel_services.h"

namespace okp {

// A pool: a return probe's instances (maxactive of them, as the kernel's kretprobe
// preallocates) and the free ones among them. A frame takes an instance from its probe's
// pool and a stub from the global stack at entry, so registering a probe reserves no stub:
// stubs bound only the frames suspended at once, all probes together. With rethook set, the
// probe's returns go through the kernel's rethook instead (src/kernel/rethook.c): the
// instances are its nodes, there is no free stack, and the pool is on no g_pools list (the
// kernel reclaims a freed task's nodes itself).
struct ReturnPool {
  // First: the rethook entry in the glue reads it through rp->okp_pool (the seam's
  // okp_return_pool_head): the kernel's struct rethook, or null for okprobes' stubs, and the
  // instances in use now (atomic).
  okp_return_pool_head head;
  okp_kretprobe* rp;
  ReturnPool* next;           // g_pools link: registry lock to change, RCU to read
  IndexStack free;            // free instances (indices into instances); links in free_links
  u32 ninstances;             // maxactive: instances, or rethook nodes
  usize instance_size;
  u32* free_links;            // [ninstances]
  u8* instances;              // ninstances * instance_size
};
// rp->okp_pool is read as an okp_return_pool_head by the glue (src/kernel/rethook.c).
static_assert(__builtin_offsetof(ReturnPool, head) == 0, "the pool's head must come first");

// A stub's life: kFree (on the global free stack) -> kArmed (a frame of a registered probe
// points at it) -> kFree at its return or reclaim. Unregister turns kArmed into kDetached: the
// frame still returns through it, with no handler, and its instance is not followed. Every
// move out of kArmed or kDetached is one atomic exchange or compare-exchange, so a return and
// a reclaim never both release a stub.
enum StubLife : u32 { kFree = 0, kArmed = 1, kDetached = 2 };

// Per stub, global and never freed (see return_probe.h). The fields are written by whoever
// popped the stub, before it publishes kArmed; they are read by whoever moves it out of
// kArmed or kDetached. A cache line each: the hit paths find a stub's state by a shift of its
// index, and two CPUs using neighbouring stubs share no line.
struct alignas(64) StubState {
  ReturnPool* pool;                // kArmed: the instance's pool (an RCU read side keeps it
                                   // alive); stale once kDetached, never followed then
  okp_kretprobe_instance* instance;  // kArmed: the frame's instance in pool
  unsigned long ret_addr;          // the real return address of the frame using it
  unsigned long frame;             // the stack slot that held ret_addr (now holds the stub)
  void* task;                      // the task whose frame it is (only compared, never followed)
  u64 life;                        // (arming sequence << 32) | StubLife
  u32 slot;                        // kArmed: the instance's index in pool
};
static_assert(sizeof(StubState) == 64, "a stub's state is one cache line");

// The life word: its low half is the StubLife, its high half counts the stub's armings. An
// exchange that expects the word it read (reclaim, detach) fails if the stub was released and
// armed again meanwhile, perhaps for another probe or task: a stub is identified by the pair.
constexpr u64 kLifeMask = 0xffffffffu;
[[gnu::always_inline]] inline StubLife life_of(u64 word) { return static_cast<StubLife>(word & kLifeMask); }
[[gnu::always_inline]] inline u64 freed(u64 word) { return word & ~kLifeMask; }
[[gnu::always_inline]] inline u64 with_life(u64 word, StubLife life) { return freed(word) | life; }
// What arming adds to a free stub's word (low half kFree): the next sequence, and kArmed.
constexpr u64 kArmOnce = (u64{1} << 32) | kArmed;

extern StubState g_stubs[arch::kReturnStubs > 0 ? arch::kReturnStubs : 1];
extern IndexStack g_free_stubs;  // stubs no frame uses
// One past the highest stub index ever armed (atomic, only grows). The free stack is LIFO and
// starts with index 0 on top, so scans of every stub (task free, unregister) stop here: they
// cost the most frames ever suspended at once, not the stub count.
extern u32 g_stubs_high;
// Every registered probe's pool, for the task-free reclaim: changed under the registry lock,
// read under RCU (a pool is freed only after unregister's grace period).
extern ReturnPool* g_pools;
// At least the number of kDetached stubs (raised before a stub is detached, lowered after it
// is freed): src/kernel/return.c keeps okprobes loaded while it is above zero.
extern long g_detached_live;

// Inline (a single load; always inlined, so no out-of-line copy lands outside .kprobes.text).
[[gnu::always_inline]] inline ReturnPool* pool_of(const okp_kretprobe* rp) {
  return static_cast<ReturnPool*>(__atomic_load_n(&rp->okp_pool, __ATOMIC_ACQUIRE));
}
bool rp_disabled(const okp_kretprobe* rp);
void count_rp_miss(okp_kretprobe* rp, okp_kretprobe_miss_cause cause);
bool frame_is_gone(u32 index);
bool try_reclaim(u32 index, StubLife life);

// A stub its caller moved out of kArmed or kDetached: the instance back to its pool, the stub
// back to the global stack. The stub's fields are read before that push: once pushed, another
// CPU may take it and write them. Always inlined: the return path runs it on every return
// (a call and the registers kept across it cost as much as its work on an emulator).
[[gnu::always_inline]] inline void release_frame(u32 index, StubLife was) {
  if (was == kArmed) {
    // The caller's RCU read side (or the registry lock) keeps the pool alive.
    StubState& st = g_stubs[index];
    ReturnPool* pool = st.pool;
    const u32 slot = st.slot;
    __atomic_fetch_sub(&pool->head.in_use, 1, __ATOMIC_RELAXED);
    pool->free.push(slot);
  }
  g_free_stubs.push(index);
  if (was == kDetached) __atomic_fetch_sub(&g_detached_live, 1, __ATOMIC_RELEASE);
}
void give_back_reclaimed(u32 index, StubLife was);

// A free stub for a frame (the entry path), false when all are in use. Raises g_stubs_high
// past it first: a scan that starts once the stub is armed covers it. Always inlined into the
// entry (no call and no registers kept across one on every hit).
[[gnu::always_inline]] inline bool take_stub(u32* index) {
  if (!g_free_stubs.pop(index)) return false;
  u32 high = __atomic_load_n(&g_stubs_high, __ATOMIC_RELAXED);
  while (*index >= high && !__atomic_compare_exchange_n(&g_stubs_high, &high, *index + 1, true,
                                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
  }
  return true;
}
void reclaim_if_owned_by(u32 index, const void* task);
// Reclaims the armed stubs of pool whose frames are gone (registry lock or RCU read side).
u32 reclaim_pool(ReturnPool* pool);
// Detached stubs whose frames are gone go back to the global stack (registry lock).
void reclaim_detached();
void init_stubs();
// Every instance of pool on its free stack (a new pool, not yet published).
void fill_pool(ReturnPool* pool);
// Stubs [0, g_stubs_high) to scan (acquire: their states were published before it grew).
inline u32 stubs_to_scan() { return __atomic_load_n(&g_stubs_high, __ATOMIC_ACQUIRE); }

}  // namespace okp
