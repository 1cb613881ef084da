/* rt_choice.c: auto mode's choice between the CPU and the GPU for one
 * kernel, by measurement once there is one.  The cost model (operations at
 * TWASM_COST_CPU_NS_PER_OP against the launch and the bytes a launch
 * moves) decides until the kernel has run on the GPU; from then on the
 * measured wall time of its launches (copies, launch, synchronise), as a
 * fixed launch cost plus a time per operation, is weighed against the CPU
 * estimate, itself lowered to what the CPU runs of the nest measured
 * (rt_offload.c times a CPU run as the time from the CPU answer to the
 * next call of the dispatch: an upper bound, so it only ever lowers the
 * estimate).  A launch's copies to the device copy of linear memory
 * (rt_resident.c) are no part of its rate: their time (the bytes at the
 * bus's rate) comes off the measured wall time and each estimate adds the
 * copy that call would make, so one launch that copied a span for the
 * first time (an attention layer's keys, 200 KiB) does not price every
 * later launch, which copies the one row written since (4 KiB).
 * A kernel whose measured GPU time loses stays on the CPU,
 * and is tried again after 2, 4, ... 1024 calls (its first launch may
 * have paid one-off costs: the driver's lazy loading, first copies), or
 * at once when a call has half as much work again as the launch that
 * lost (RT_CHOICE_GROWN): the rate is the launch's wall time past the
 * launch cost and copies, over its operations, so what a launch pays
 * besides the kernel (a copy queued on the copy engine, a direct launch
 * where graphs replay) counts as work and grows with the operations; a
 * nest whose work grows call after call (an LLM's attention over the
 * cached positions: 1024 calls are 85 tokens) would stay priced by a
 * launch several sizes back.  A launch measured at the new size lowers
 * the rate (the lowest is kept) or loses again, and waits again. */
#include <math.h>

#include "rt_offload.h"

#define RT_CHOICE_SKIP_MAX 1024u
#define RT_CHOICE_GROWN 1.5

double rt_choice_cpu_us(const rt_choice *c, double ops, double model_us) {
  if (c->cpu_ns_per_op > 0 && ops * c->cpu_ns_per_op / 1000 < model_us)
    return ops * c->cpu_ns_per_op / 1000 + c->move_us;
  return model_us + c->move_us;
}

double rt_choice_gpu_us(const rt_choice *c, double ops, double launch_us, double model_us) {
  if (!c->gpu_runs) return model_us;
  return launch_us + ops * c->gpu_ns_per_op / 1000;
}

bool rt_choice_take_gpu(rt_choice *c, double ops, double launch_us, double cpu_model_us, double gpu_model_us) {
  double cpu = rt_choice_cpu_us(c, ops, cpu_model_us);
  if (rt_choice_gpu_us(c, ops, launch_us, gpu_model_us) < cpu) return true;
  /* Unmeasured, the model's answer stands; measured and slower, wait. */
  if (!c->gpu_runs) return false;
  /* Waiting after a loss, with half as much work again as the launch
   * that lost: measure. */
  if (c->losses > 0 && ops >= RT_CHOICE_GROWN * c->ran_ops) {
    c->skip = 0;
    return true;
  }
  /* Estimated slower from a launch that won (a new size): wait 2 calls. */
  if (c->skip == 0 && c->losses == 0) c->skip = 2;
  if (c->skip > 0) {
    c->skip--;
    return false;
  }
  return true;
}

void rt_choice_gpu_ran(rt_choice *c, double ops, double wall_us, double launch_us, double copy_us,
                       double again_us, double cpu_model_us) {
  double fixed = launch_us + copy_us;
  double per_op = ops > 0 && wall_us > fixed ? (wall_us - fixed) * 1000 / ops : 0;
  if (!c->gpu_runs || per_op < c->gpu_ns_per_op) c->gpu_ns_per_op = per_op;
  c->gpu_runs++;
  c->ran_ops = ops;
  /* won or lost as the same call would run now: its one-off copies off */
  double again = wall_us - copy_us + again_us;
  if (again < rt_choice_cpu_us(c, ops, cpu_model_us)) {
    c->losses = 0;
    c->skip = 0;
    return;
  }
  if (c->losses < 10) c->losses++;
  c->skip = 1u << c->losses;
  if (c->skip > RT_CHOICE_SKIP_MAX) c->skip = RT_CHOICE_SKIP_MAX;
}

void rt_choice_cpu_ran(rt_choice *c, double ops, double wall_us) {
  if (ops <= 0 || !(wall_us >= 0) || isinf(wall_us)) return;
  double per_op = wall_us * 1000 / ops;
  if (c->cpu_ns_per_op <= 0 || per_op < c->cpu_ns_per_op) c->cpu_ns_per_op = per_op;
  c->cpu_runs++;
}
