/* rt_seq.c: auto mode's cost model for an exact float sum in source order
 * (TWASM_PATH_SEQ, ptx/ptx_seqsum.c): one GPU thread adds every term, a
 * chain of dependent adds at about the add's latency a term, slower than
 * the CPU's loop over the same terms.  It pays only where running the
 * loop on the CPU would first move its data back from the device, and
 * the next kernel move it there again: so it is offered only when every
 * byte it reads already lies on the device, and then weighed against the
 * CPU's loop plus that migration.
 *
 * Where the data lies, by kind of linear memory (rt_offload.c says which):
 * - managed or pageable memory the device reaches itself: a span lies on
 *   the device when an earlier launch moved it there (prefetched or
 *   faulted in; rt_offload.c's list of prefetched spans); the CPU's
 *   touches since are not tracked there, so the guess may be stale, which
 *   costs time (pages fault over), never results; a CPU read of such data
 *   migrates it back (DESIGN.md: 64 KiB dirtied by the CPU then read by a
 *   kernel, ~136 us round trip against 20 us resident);
 * - pinned host memory with its device copy (rt_resident.c): data lies on
 *   the device where every page of the spans is kept, but the host holds
 *   the same bytes, so the CPU's loop reads them where they are and moves
 *   nothing: the CPU wins whenever its loop is faster than one GPU thread,
 *   always by this model;
 * - pinned host memory without a device copy: never on the device.
 * TWASM_DEVICE=gpu skips all of this (tests). */
#include "rt_offload.h"

/* One GPU thread's time a term: a fixed part and a part per byte the
 * term reads (the one-warp sum is bound by each term's load latency, not
 * by the add).  Fitted to the H200's first launches of seqsum.c's sums,
 * 1M terms each, data already on the device (docs/PERFORMANCE.md, e2e
 * after session 52's merges): 6.2 ns a term reading 4 bytes, 7.3 and
 * 10.6 ns reading 8; 2 + 1.1 a byte covers the slower of each (6.4 and
 * 10.8).  An estimate until a launch is measured (rt_choice.c keeps the
 * measured rate). */
#define RT_SEQ_NS_PER_TERM 2.0
#define RT_SEQ_NS_PER_BYTE 1.1
/* A CPU read of bytes the device holds in managed memory, and the next
 * kernel's read of them again: (136 - 20) us per 64 KiB (DESIGN.md). */
#define RT_SEQ_BACK_US_PER_BYTE ((136.0 - 20.0) / 65536.0)

bool rt_seq_kernel(const twasm_kernel_abi *k) {
  return k->kind == TWASM_KERNEL_REDUCE && k->nptx > 0 && k->ptx[0].path == TWASM_PATH_SEQ;
}

double rt_seq_gpu_us(const rt_offload_plan *p, double launch_us) {
  return launch_us + (p->iterations * RT_SEQ_NS_PER_TERM + (double)p->bytes * RT_SEQ_NS_PER_BYTE) / 1000;
}

const char *rt_seq_weigh(const rt_offload_plan *p, rt_seq_place place, double launch_us, double *move_us,
                         double *gpu_us) {
  *move_us = 0;
  switch (place) {
  case RT_SEQ_HOST:
    return "exact in-order sum: its data is not on the GPU (one GPU thread is slower than the CPU's loop)";
  case RT_SEQ_PINNED:
    return "exact in-order sum: linear memory is pinned host memory, its data not on the GPU";
  case RT_SEQ_KEPT:
    /* the host holds the same bytes: the CPU's loop moves nothing */
    break;
  case RT_SEQ_MANAGED:
    *move_us = (double)p->bytes * RT_SEQ_BACK_US_PER_BYTE;
    break;
  }
  *gpu_us = rt_seq_gpu_us(p, launch_us);
  return NULL;
}
