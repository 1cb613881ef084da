/* ir_pass.h: the passes over the host module's LLVM IR that twasmc runs
 * around LLVM's own pipeline (driver.c lists them in order): loop
 * re-rolling and address folding after mem2reg, and the hold on
 * vectorising and unrolling loops until the offload stage has seen them. */
#ifndef TW_IR_PASS_H
#define TW_IR_PASS_H

#include <stdbool.h>
#include <stdint.h>

#include <llvm-c/Core.h>

/* Metadata kind lowering puts on every branch back to a Wasm loop's
 * header: !{i32 file offset of the loop instruction}.  ir_hold.c carries
 * it into the loop's llvm.loop node, where it survives LLVM's loop passes. */
#define IR_MD_LOOP "twasm.loop"

/* After mem2reg, before the optimisation pipeline: rewrites memory
 * addresses zext(x + c) to zext(x) + c where an earlier access proves that
 * x + c does not wrap, memory 0 being at most max_memory_bytes (below
 * 2^32) (ir_address.c).  Returns how many it rewrote. */
unsigned ir_fold_address_adds(LLVMModuleRef mod, uint64_t max_memory_bytes);

/* Metadata kind lowering puts on the switch of a devirtualised
 * call_indirect (low_devirt.c): !{}.  ir_unswitch.c looks for it. */
#define IR_MD_DEVIRT "twasm.devirt"

/* Before the optimisation pipeline, around the driver's run of
 * simple-loop-unswitch<nontrivial> with IR_UNSWITCH_THRESHOLD
 * (ir_unswitch.c): every function with a body but without a loop whose
 * IR_MD_DEVIRT switch tests a loop-invariant index is marked optsize
 * (which that unswitching skips) until ir_unswitch_unmask.  Returns how
 * many functions are left unmarked. */
#define IR_UNSWITCH_THRESHOLD 2000
unsigned ir_unswitch_mask(LLVMModuleRef mod);
void ir_unswitch_unmask(LLVMModuleRef mod);

/* Last, before code generation: blocks ending in a call of twasm_rt_trap
 * and `unreachable` branch to their function's one return block, and the
 * trap loses noreturn, so that LLVM shrink-wraps prologues past early
 * returns (ir_trap_exit.c).  Returns how many blocks it joined. */
unsigned ir_join_trap_exits(LLVMModuleRef mod);

/* First in the traps pass (ir_join_trap_exits calls it): the functions
 * the lowering marked "disable-tail-calls" (compiler/low_tail.c: no
 * sibling call of theirs, for the backtraces) lose the mark, and their
 * calls that may be sibling calls without losing a frame are marked
 * `tail`: the trap's and the llvm.mem* intrinsics' (ir_tail.c).  Returns
 * how many functions it unmarked. */
unsigned ir_restore_tail_calls(LLVMModuleRef mod);

/* Then in the traps pass (ir_join_trap_exits calls it): a trap block
 * LLVM merged from several checks, the trap's arguments phis, is split
 * into one block per check with that check's arguments, so that no
 * check's hot path sets its trap offset (ir_trap_split.c).  Returns how
 * many blocks it made. */
unsigned ir_split_trap_blocks(LLVMModuleRef mod);

/* Before the traps pass, on optimised IR: each byte address `P + X`
 * that loads or stores in other blocks use is computed again beside
 * them, an invariant `Q + C` in P folded as `(Q + X) + C`, so that code
 * generation folds it into the accesses' addressing modes instead of
 * keeping one value (often spilled) per address across a loop LICM hoisted
 * it out of (ir_sink_addr.c).  Returns how many addresses it sank. */
unsigned ir_sink_addresses(LLVMModuleRef mod);

/* After sinkaddr, on optimised IR: each i32 `X + C` (add or or of a
 * constant), or its zero-extension, computed outside a loop for users
 * inside it is computed again in each such user's block, so that one X
 * stays live across the loop instead of one value per offset
 * (ir_remat.c).  Returns how many values it moved. */
unsigned ir_remat_offsets(LLVMModuleRef mod);
/* Before the offload stage, in functions with a vector loop at their top
 * level: a block outside loops whose conditional branch follows a call or
 * store is cut after it, so that a vector loop's guard begins a block of
 * its own (ir_split_head.c).  Returns how many blocks it cut. */
unsigned ir_split_guard_heads(LLVMModuleRef mod);

/* Before the traps pass, on optimised IR: each integer select carried to a
 * loop's next iteration whose condition waits on a pointer-chasing load
 * (a load through another load's value, addressed from the carried value)
 * becomes a branch, so that the CPU runs ahead past the cache miss
 * (ir_select_branch.c).  Returns how many it turned. */
unsigned ir_branch_chasing_selects(LLVMModuleRef mod);

/* After the bounds pass, before the optimisation pipeline: the increment
 * of each loop's i32 pointer that an access bounds in every iteration
 * gets nuw (ir_address_loop.c).  Returns how many it marked. */
unsigned ir_mark_pointer_increments(LLVMModuleRef mod, uint64_t max_memory_bytes);

/* Last, on optimised IR: vector integer code that clang's wasm vectoriser
 * wrote in wider lanes than its values need, rewritten exactly so that
 * SSE2 gets short sequences (|a - b| of widened lanes as llvm.abs, sign
 * extensions of non-negative lanes as zero extensions, i32 multiplies of
 * operands below 2^15 masked so that pmaddwd is chosen) (ir_lanes.c).
 * Returns how many it rewrote. */
unsigned ir_narrow_lanes(LLVMModuleRef mod);
/* Before ir_narrow_lanes, in the same pass: i32x4 sums of zero-extended
 * byte groups (each lane i the sum of X_t[o + i]) rewritten as shared
 * 16-bit sums of whole 8-byte halves (ir_lanes_sum.c).  Returns how many. */
unsigned ir_share_byte_sums(LLVMModuleRef mod);

/* After the offload stage, before LLVM's loop unroller: one-block loops of
 * 128-bit vector arithmetic (clang's Wasm SIMD loops, which LLVM's loop
 * vectoriser does not interleave) get llvm.loop.unroll.count 2
 * (ir_vunroll.c).  Returns how many. */
unsigned ir_unroll_vector_loops(LLVMModuleRef mod);

/* Last, on optimised IR: `and i64 x, M` where M is 0xffffffff less low bits
 * that are proven zero in x (InstCombine's narrowing of a zero extension)
 * gets 0xffffffff back, which x86 selects as a free 32-bit zero extension
 * (ir_mask.c).  Returns how many it rewrote. */
unsigned ir_widen_address_masks(LLVMModuleRef mod);

/* The C API cannot change a phi's incoming block: each phi of bb is
 * rebuilt with incoming block `from` replaced by `to`, or dropped when to
 * is NULL (ir_reroll.c; loop versioning uses it too). */
void ir_retarget_phis(LLVMBasicBlockRef bb, LLVMBasicBlockRef from, LLVMBasicBlockRef to);
/* at and the instructions after it in its block moved to a new block
 * `name` placed after it, the successors' phis retargeted to it; the old
 * block is left without a terminator (ir_split_head.c). */
LLVMBasicBlockRef ir_split_before(LLVMValueRef at, const char *name);
/* The same, calling replaced(ctx, old, fresh) for each phi before old is
 * erased: the C API cannot change a phi's incoming block, so every phi of
 * bb is a new value afterwards, and old's memory may be reused by the next
 * value made (a map keyed by old must move its entry). */
void ir_retarget_phis_notify(LLVMBasicBlockRef bb, LLVMBasicBlockRef from, LLVMBasicBlockRef to,
                             void (*replaced)(void *ctx, LLVMValueRef old, LLVMValueRef fresh), void *ctx);

/* Gives `to` every metadata attachment of `from` but its debug location:
 * an instruction built to replace another keeps what later stages read
 * from it (ir_reroll_shape.c; the address fold uses it too). */
void ir_copy_metadata(LLVMValueRef from, LLVMValueRef to);

/* After mem2reg, before ir_fold_address_adds: rewrites loops that clang
 * unrolled by two (two copies of one iteration per trip, with a run-time
 * count and the odd iteration after the loop, or a constant count) into
 * one loop of single iterations, where it proves the result exact
 * (ir_reroll.c).  Returns how many it rewrote.  exact_traps: a loop
 * that touches memory re-rolled only behind a range test, the unrolled
 * loop kept as the checked copy (so a trap names its exact access);
 * false only for ir_inline.c's trial (sizes as without the kept copies). */
unsigned ir_reroll_loops(LLVMModuleRef mod, bool exact_traps);

/* Inlining decided as if the re-roll kept no checked copies (ir_inline.c).
 * The kept copies make kernels too large for LLVM's inliner, which then
 * declines callers it took before (mm +7.2 % instructions).  Before the
 * re-roll, ir_calls_number gives every call to a defined function an id
 * (IR_MD_CALL); the driver re-rolls a clone with exact_traps false, folds
 * its addresses and runs the bounds pass's inliner on it, reading
 * ir_calls_seen before and after; ir_calls_mark_inlined then marks
 * (IR_MD_INLINE) each call of the module the trial inlined, and the bounds
 * pass's inliner, run between ir_calls_obey(mod, true) and (mod, false),
 * inlines those whatever their size (call-site alwaysinline) and decides
 * the rest as before. */
#define IR_MD_CALL "twasm.call"
#define IR_MD_INLINE "twasm.inline"
typedef struct {
  unsigned ncalls, nfuncs;
  unsigned char *own;   /* [ncalls]: the call is in the function it was numbered in */
  unsigned char *any;   /* [ncalls]: the call (or a copy of it) is anywhere */
  unsigned char *alive; /* [nfuncs]: the function numbered so is still there */
} ir_call_seen;
unsigned ir_calls_number(LLVMModuleRef mod, unsigned *nfuncs);
/* Fills seen (its arrays allocated by the caller, zeroed). */
void ir_calls_seen(LLVMModuleRef mod, ir_call_seen *seen);
/* Marks each call present in before, gone from its function in after
 * (from everywhere, where its function is gone); returns how many. */
unsigned ir_calls_mark_inlined(LLVMModuleRef mod, const ir_call_seen *before, const ir_call_seen *after);
/* on: each marked call gets the call-site attribute alwaysinline; off:
 * the attributes and every IR_MD_CALL / IR_MD_INLINE mark go. */
void ir_calls_obey(LLVMModuleRef mod, bool on);

/* Before the standard pipeline: loop metadata on every loop asking LLVM
 * not to vectorise or unroll it; after the offload stage,
 * ir_release_loops removes it again (ir_hold.c). */
void ir_hold_loops(LLVMModuleRef mod);
void ir_release_loops(LLVMModuleRef mod);
/* Calls in loops to float functions that store nothing (expf) kept from
 * inlining until the offload stage, which may call them from a kernel;
 * ir_release_calls frees them again and marks alwaysinline those LLVM's
 * inliner would have taken (a small callee, or one called there alone):
 * how many, for an always-inline run after. */
unsigned ir_hold_calls(LLVMModuleRef mod);
unsigned ir_release_calls(LLVMModuleRef mod);
/* The file offset of the Wasm loop whose latch branch this is, from the
 * metadata ir_hold_loops left on it (false when LLVM dropped it or the
 * branch closes no Wasm loop). */
bool ir_loop_offset(LLVMValueRef latch, uint32_t *offset);

/* Metadata on the branch that enters the checked copy of a loop nest the
 * bounds pass versioned (compiler/bnd_loop.c): the copy that runs only
 * when the one test before the nest fails, and traps at the exact access.
 * ir_checked_copy says whether bb's terminator carries it; the offload
 * stage leaves those copies alone (the fast copy speaks for the nest). */
#define IR_MD_CHECKED "twasm.bounds.checked"
bool ir_checked_copy(LLVMBasicBlockRef bb);

/* Whether instruction i produces a vector or reads one (ir_lanes.c). */
bool ir_touches_vector(LLVMValueRef i);

#endif
