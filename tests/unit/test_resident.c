/* test_resident.c: auto mode's measured choice (runtime/rt_choice.c) and
 * the device copy of linear memory (runtime/rt_resident.c) through the
 * stand-in libcuda.so.1 of tests/fake_cuda, whose device memory is host
 * memory and whose copies are memcpy: which pages a launch copies, which
 * stay kept (write-protected) between launches, and that a CPU write to a
 * kept page, caught by the fault handler, or a range a system call will
 * write (rt_resident_touch) makes it copied again. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cu.h"
#include "rt_internal.h"
#include "rt_offload.h"
#include "unit_fake.h"

#define PAGE 4096u
#define MEM (1u << 20)

/* ---- rt_choice ---------------------------------------------------------- */

START_TEST(choice_follows_the_model_until_measured) {
  rt_choice c = {0};
  /* The model says the GPU (10 us against 100): launch; says the CPU: not. */
  ck_assert(rt_choice_take_gpu(&c, 1e5, 10, 100, 20));
  ck_assert(!rt_choice_take_gpu(&c, 1e5, 10, 100, 200));
  ck_assert_uint_eq(c.skip, 0);
}
END_TEST

START_TEST(choice_leaves_a_slow_gpu_and_tries_again_later) {
  rt_choice c = {0};
  /* The model said 20 us; the launch took 500 against the CPU's 100. */
  rt_choice_gpu_ran(&c, 1e5, 500, 10, 0, 0, 100);
  ck_assert_uint_eq(c.gpu_runs, 1);
  ck_assert_double_eq_tol(rt_choice_gpu_us(&c, 1e5, 10, 20), 500, 1e-6);
  ck_assert_uint_eq(c.skip, 2);
  /* Two calls on the CPU, then one try on the GPU. */
  ck_assert(!rt_choice_take_gpu(&c, 1e5, 10, 100, 20));
  ck_assert(!rt_choice_take_gpu(&c, 1e5, 10, 100, 20));
  ck_assert(rt_choice_take_gpu(&c, 1e5, 10, 100, 20));
  rt_choice_gpu_ran(&c, 1e5, 400, 10, 0, 0, 100);
  ck_assert_uint_eq(c.skip, 4);
  /* The waits double up to 1024 calls. */
  for (int i = 0; i < 20; i++) rt_choice_gpu_ran(&c, 1e5, 400, 10, 0, 0, 100);
  ck_assert_uint_eq(c.skip, 1024);
  /* A faster launch (the first paid one-off costs) wins it back. */
  rt_choice_gpu_ran(&c, 1e5, 30, 10, 0, 0, 100);
  ck_assert_uint_eq(c.skip, 0);
  ck_assert(rt_choice_take_gpu(&c, 1e5, 10, 100, 20));
}
END_TEST

START_TEST(choice_scales_measurements_by_work) {
  rt_choice c = {0};
  /* 10 us of launch plus 0.1 ns per operation, measured at 1e5. */
  rt_choice_gpu_ran(&c, 1e5, 20, 10, 0, 0, 100);
  ck_assert_double_eq_tol(rt_choice_gpu_us(&c, 1e6, 10, 0), 110, 1e-6);
  /* The CPU's runs only ever lower its estimate (they are upper bounds). */
  rt_choice_cpu_ran(&c, 1e6, 50);
  ck_assert_double_eq_tol(rt_choice_cpu_us(&c, 1e6, 500), 50, 1e-6);
  ck_assert_double_eq_tol(rt_choice_cpu_us(&c, 1e6, 20), 20, 1e-6);
  rt_choice_cpu_ran(&c, 1e6, 5000);
  ck_assert_double_eq_tol(rt_choice_cpu_us(&c, 1e6, 500), 50, 1e-6);
  /* A measured CPU faster than the measured GPU keeps the nest there. */
  ck_assert(!rt_choice_take_gpu(&c, 1e6, 10, 500, 20));
}
END_TEST

/* An attention layer's keys: its first launch copies the whole span (200
 * KiB: 4.1 us at the bus's rate), the next only the row written since (4
 * KiB: 0.08 us).  The copy is no part of the measured rate: the launch's
 * 40 us (10 of launch, 4.1 of copy, 25.9 of kernel) prices the next call at
 * 10 + 0.08 + 25.9 = 36 us against the CPU's 40: the GPU.  (Before, the
 * rate held the copy: 40 us, not below the CPU's, so the CPU, and the
 * kernel was left for 2, 4, ... calls, each launch that came one more
 * first copy of another layer's span.) */
START_TEST(choice_leaves_a_first_copy_out_of_the_rate) {
  rt_choice c = {0};
  double ops = 1e5, launch = 10, cpu = 40;
  double first = 204800 / 50e3, row = 4096 / 50e3;
  rt_choice_gpu_ran(&c, ops, 40, launch, first, row, cpu);
  ck_assert_double_eq_tol(c.gpu_ns_per_op * ops / 1000, 40 - launch - first, 1e-6);
  /* the same call again would copy one row: 36 us, a win, no wait */
  ck_assert_uint_eq(c.losses, 0);
  ck_assert_uint_eq(c.skip, 0);
  ck_assert(rt_choice_take_gpu(&c, ops, launch + row, cpu, 0));
  /* a call that would copy the span again is priced with it */
  ck_assert_double_eq_tol(rt_choice_gpu_us(&c, ops, launch + first, 0), 40, 1e-6);
  /* a launch whose copy repeats every time (again = its copy) loses */
  rt_choice d = {0};
  rt_choice_gpu_ran(&d, ops, 40, launch, first, first, cpu);
  ck_assert_uint_eq(d.losses, 1);
  ck_assert(!rt_choice_take_gpu(&d, ops, launch + first, cpu, 0));
}
END_TEST

/* An attention layer's scores over the cached positions: work grows every
 * call.  Its launch at 31,488 operations took 33 us, past the launch's 10
 * no copy, against the CPU's 12: a loss, and a wait of 2 calls.  Priced
 * from that launch, a call at 40,000 stays on the CPU (the rate holds the
 * whole 23 us of the launch past its cost, scaled with the work); one at
 * half as much work again as the launch measured is launched and measured,
 * whatever the wait left. */
START_TEST(choice_measures_again_when_the_work_grew) {
  rt_choice c = {0};
  double launch = 10;
  rt_choice_gpu_ran(&c, 31488, 33, launch, 0, 0, 12);
  ck_assert_uint_eq(c.losses, 1);
  ck_assert_uint_eq(c.skip, 2);
  ck_assert(!rt_choice_take_gpu(&c, 40000, launch, 15, 0));
  /* 1.5 x 31,488 = 47,232 */
  ck_assert(rt_choice_take_gpu(&c, 47232, launch, 18, 0));
  /* measured there at 19 us against the CPU's 20: the rate falls, a win */
  rt_choice_gpu_ran(&c, 47232, 19, launch, 0, 0, 20);
  ck_assert_uint_eq(c.losses, 0);
  ck_assert(rt_choice_take_gpu(&c, 60000, launch, 23, 0));
  /* a nest of one size that lost keeps its wait */
  rt_choice d = {0};
  rt_choice_gpu_ran(&d, 1e5, 500, launch, 0, 0, 100);
  ck_assert(!rt_choice_take_gpu(&d, 1.4e5, launch, 140, 0));
}
END_TEST

/* ---- rt_resident --------------------------------------------------------- */

static uint8_t *host;
static rt_resident *res;

static bool fake_up(void) { return unit_fake_up(NULL); }

static void setup(void) { res = unit_resident_up(&host, MEM); }

static void teardown(void) { unit_resident_down(res, host, MEM); }

/* A matrix-vector launch: W (128 KiB, read), x (1 KiB, read), y (256
 * bytes, written, not page-aligned). */
static rt_offload_plan plan_of(void) {
  rt_offload_plan p;
  memset(&p, 0, sizeof p);
  p.spans[0] = (rt_offload_span){0, 128 * 1024, false, false, false};
  p.spans[1] = (rt_offload_span){200 * 1024, 201 * 1024, false, false, false};
  p.spans[2] = (rt_offload_span){300 * 1024 + 100, 300 * 1024 + 356, true, false, false};
  p.nspans = 3;
  return p;
}

/* What the stream would do: copies in, the kernel (y = 0xAB bytes), copies out. */
static void run(const rt_resident_launch *L, const rt_offload_plan *p) {
  for (size_t i = 0; i < L->nin; i++) memcpy(L->in[i].dev, L->in[i].host, L->in[i].len);
  memset(L->dev_base + p->spans[2].lo, 0xAB, p->spans[2].hi - p->spans[2].lo);
  for (size_t i = 0; i < L->nout; i++) memcpy(L->out[i].host, L->out[i].dev, L->out[i].len);
}

static uint64_t in_bytes(const rt_resident_launch *L) {
  uint64_t n = 0;
  for (size_t i = 0; i < L->nin; i++) n += L->in[i].len;
  return n;
}

START_TEST(resident_copies_once_and_keeps_long_spans) {
  if (!fake_up()) {
    fprintf(stderr, "test_resident: SKIP (no fake driver)\n");
    return;
  }
  rt_offload_plan p = plan_of();
  static rt_resident_launch L;
  cu_error err;
  /* First launch: W's 32 pages, x's page, y's page. */
  ck_assert_uint_eq(rt_resident_cost_bytes(res, &p, false), (32 + 1 + 1) * PAGE + 256);
  ck_assert_msg(rt_resident_prepare(res, MEM, &p, false, &L, &err), "%s", err.message);
  ck_assert_uint_eq(in_bytes(&L), (32 + 1 + 1) * PAGE);
  ck_assert_uint_eq(L.nout, 1);
  ck_assert_uint_eq(L.out[0].len, 256);
  run(&L, &p);
  ck_assert(memcmp(L.dev_base, host, 128 * 1024) == 0);
  ck_assert_uint_eq(host[300 * 1024 + 100], 0xAB);
  ck_assert_uint_eq(host[300 * 1024 + 99], (uint8_t)((300 * 1024 + 99) * 7 + 3));
  ck_assert_uint_eq(rt_resident_kept_bytes(res), 32 * PAGE);
  /* Second launch: only the short spans move. */
  ck_assert_uint_eq(rt_resident_cost_bytes(res, &p, false), 2 * PAGE + 256);
  ck_assert_msg(rt_resident_prepare(res, MEM, &p, false, &L, &err), "%s", err.message);
  ck_assert_uint_eq(in_bytes(&L), 2 * PAGE);
  run(&L, &p);
  /* A CPU write to W faults, is let through, and its page moves again. */
  host[5 * PAGE + 17] = 99;
  ck_assert_uint_eq(host[5 * PAGE + 17], 99);
  ck_assert_uint_eq(rt_resident_cost_bytes(res, &p, false), 3 * PAGE + 256);
  ck_assert_msg(rt_resident_prepare(res, MEM, &p, false, &L, &err), "%s", err.message);
  ck_assert_uint_eq(in_bytes(&L), 3 * PAGE);
  run(&L, &p);
  ck_assert_uint_eq(L.dev_base[5 * PAGE + 17], 99);
  /* A range a system call will write is opened first. */
  rt_resident_touch(host + 9 * PAGE + 4000, 200);
  ck_assert_uint_eq(rt_resident_cost_bytes(res, &p, false), 4 * PAGE + 256);
  host[10 * PAGE] = 1; /* opened: no fault needed, none taken */
  ck_assert_msg(rt_resident_prepare(res, MEM, &p, false, &L, &err), "%s", err.message);
  run(&L, &p);
  ck_assert(memcmp(L.dev_base, host, 128 * 1024) == 0);
}
END_TEST

START_TEST(resident_abandon_forgets_uncopied_pages) {
  if (!fake_up()) {
    fprintf(stderr, "test_resident: SKIP (no fake driver)\n");
    return;
  }
  rt_offload_plan p = plan_of();
  static rt_resident_launch L;
  cu_error err;
  ck_assert_msg(rt_resident_prepare(res, MEM, &p, false, &L, &err), "%s", err.message);
  /* The launch failed before its copies ran. */
  rt_resident_abandon(res, &L);
  ck_assert_uint_eq(rt_resident_cost_bytes(res, &p, false), (32 + 1 + 1) * PAGE + 256);
  host[0] = 5; /* writable again without a fault */
  ck_assert_msg(rt_resident_prepare(res, MEM, &p, false, &L, &err), "%s", err.message);
  run(&L, &p);
  ck_assert_uint_eq(L.dev_base[0], 5);
}
END_TEST

/* Faults the device copy does not own go on to the trap handler: pages
 * never kept (a guard page's fault is one) and addresses outside. */
START_TEST(resident_owns_only_kept_pages) {
  if (!fake_up()) {
    fprintf(stderr, "test_resident: SKIP (no fake driver)\n");
    return;
  }
  rt_offload_plan p = plan_of();
  static rt_resident_launch L;
  cu_error err;
  ck_assert_msg(rt_resident_prepare(res, MEM, &p, false, &L, &err), "%s", err.message);
  run(&L, &p);
  ck_assert(!rt_resident_fault((uintptr_t)host + 200 * 1024));
  ck_assert(!rt_resident_fault((uintptr_t)host + MEM + PAGE));
  ck_assert(!rt_resident_fault((uintptr_t)host - PAGE));
  ck_assert(rt_resident_fault((uintptr_t)host + 3 * PAGE));
  /* Once opened, a second fault there is not its own either. */
  ck_assert(!rt_resident_fault((uintptr_t)host + 3 * PAGE));
}
END_TEST

/* Copies less than 16 KiB apart go as one (x and y of a product in
 * neighbouring pages, the same page twice), the bytes between them with
 * them; W's kept pages stay out of it; the result is the same. */
START_TEST(resident_merges_near_copies) {
  if (!fake_up()) {
    fprintf(stderr, "test_resident: SKIP (no fake driver)\n");
    return;
  }
  rt_offload_plan p = plan_of();
  p.spans[1] = (rt_offload_span){200 * 1024, 201 * 1024, false, false, false};
  p.spans[2] = (rt_offload_span){201 * 1024 + 512, 201 * 1024 + 768, true, false, false};
  p.spans[3] = (rt_offload_span){210 * 1024, 211 * 1024, false, false, false};
  p.nspans = 4;
  static rt_resident_launch L;
  cu_error err;
  ck_assert_msg(rt_resident_prepare(res, MEM, &p, false, &L, &err), "%s", err.message);
  /* W's 32 pages apart (100 KiB away), then pages 50..52 as one copy */
  ck_assert_uint_eq(L.nin, 2);
  ck_assert_ptr_eq(L.in[1].host, host + 50 * PAGE);
  ck_assert_ptr_eq(L.in[1].dev, L.dev_base + 50 * PAGE);
  ck_assert_uint_eq(L.in[1].len, 3 * PAGE);
  for (size_t i = 0; i < L.nin; i++) memcpy(L.in[i].dev, L.in[i].host, L.in[i].len);
  memset(L.dev_base + p.spans[2].lo, 0xAB, p.spans[2].hi - p.spans[2].lo);
  for (size_t i = 0; i < L.nout; i++) memcpy(L.out[i].host, L.out[i].dev, L.out[i].len);
  ck_assert_uint_eq(host[201 * 1024 + 512], 0xAB);
  ck_assert_uint_eq(host[201 * 1024 + 511], (uint8_t)((201 * 1024 + 511) * 7 + 3));
  ck_assert(memcmp(L.dev_base + 210 * 1024, host + 210 * 1024, 1024) == 0);
  /* Again: W is kept, only the one merged copy goes. */
  ck_assert_msg(rt_resident_prepare(res, MEM, &p, false, &L, &err), "%s", err.message);
  ck_assert_uint_eq(L.nin, 1);
  ck_assert_uint_eq(L.in[0].len, 3 * PAGE);
}
END_TEST

/* A kernel writing its outputs into the host pages (TWASM_ENTRY_HOST_OUT,
 * the matrix-vector product): y's page is neither copied in nor back. */
START_TEST(resident_host_out_moves_no_output) {
  if (!fake_up()) {
    fprintf(stderr, "test_resident: SKIP (no fake driver)\n");
    return;
  }
  rt_offload_plan p = plan_of();
  static rt_resident_launch L;
  cu_error err;
  ck_assert_msg(rt_resident_prepare(res, MEM, &p, true, &L, &err), "%s", err.message);
  ck_assert_uint_eq(in_bytes(&L), (32 + 1) * PAGE);
  ck_assert_uint_eq(L.nout, 0);
  for (size_t i = 0; i < L.nin; i++) {
    uint64_t lo = (uint64_t)((uint8_t *)L.in[i].host - host), hi = lo + L.in[i].len;
    ck_assert(hi <= p.spans[2].lo || lo >= p.spans[2].hi);
  }
  /* the kernel: reads W and x from the mirror, writes y to the host */
  for (size_t i = 0; i < L.nin; i++) memcpy(L.in[i].dev, L.in[i].host, L.in[i].len);
  ck_assert(memcmp(L.dev_base, host, 128 * 1024) == 0);
  memset(host + p.spans[2].lo, 0xCD, p.spans[2].hi - p.spans[2].lo);
  /* again: W kept, x's page alone */
  ck_assert_msg(rt_resident_prepare(res, MEM, &p, true, &L, &err), "%s", err.message);
  ck_assert_uint_eq(in_bytes(&L), PAGE);
  ck_assert_uint_eq(L.nout, 0);
  ck_assert_uint_eq(host[300 * 1024 + 100], 0xCD);
}
END_TEST

/* A written span sharing a page with a long read span: that page would be
 * kept by the read span, but the kernel writes its output bytes into the
 * host page, so the mirror would go stale while kept.  With host_out the
 * page is opened again (copied every launch); without, it stays kept (the
 * copy back keeps mirror and host equal). */
START_TEST(resident_host_out_keeps_no_written_page) {
  if (!fake_up()) {
    fprintf(stderr, "test_resident: SKIP (no fake driver)\n");
    return;
  }
  rt_offload_plan p = plan_of();
  p.spans[0] = (rt_offload_span){0, 128 * 1024 - 256, false, false, false};
  p.spans[2] = (rt_offload_span){128 * 1024 - 256, 128 * 1024, true, false, false};
  static rt_resident_launch L;
  cu_error err;
  ck_assert_msg(rt_resident_prepare(res, MEM, &p, false, &L, &err), "%s", err.message);
  ck_assert(rt_resident_fault((uintptr_t)host + 31 * PAGE)); /* kept: its fault, now opened */
  ck_assert_msg(rt_resident_prepare(res, MEM, &p, true, &L, &err), "%s", err.message);
  ck_assert_uint_eq(rt_resident_kept_bytes(res) / PAGE, 33); /* 32, then page 31 again, opened */
  ck_assert(!rt_resident_fault((uintptr_t)host + 31 * PAGE)); /* not kept */
  host[31 * PAGE + 4000] = 7; /* writable: no fault */
  for (size_t i = 0; i < L.nin; i++) memcpy(L.in[i].dev, L.in[i].host, L.in[i].len);
  /* the next launch copies page 31 again, keeps it not */
  ck_assert_msg(rt_resident_prepare(res, MEM, &p, true, &L, &err), "%s", err.message);
  ck_assert_uint_eq(in_bytes(&L), 2 * PAGE); /* page 31 and x's page */
  ck_assert(!rt_resident_fault((uintptr_t)host + 31 * PAGE));
  for (size_t i = 0; i < L.nin; i++) memcpy(L.in[i].dev, L.in[i].host, L.in[i].len);
  ck_assert_uint_eq(L.dev_base[31 * PAGE + 4000], 7);
}
END_TEST

/* llm's attention, token by token, over two layers: each token's k
 * product (a host-out kernel) writes the layer's new key row into host
 * memory, the CPU rotates it (rope), then every head's scores read the
 * layer's rows 0..n.  From the second token on, a scores launch copies the
 * pages of that one row (3 KiB: 1 or 2 pages) and q's page, never the
 * rows before it, and the mirror holds the host's bytes of the whole span
 * (what the CPU and the product wrote since is copied; nothing else). */
START_TEST(resident_attention_copies_only_the_new_row) {
  if (!fake_up()) {
    fprintf(stderr, "test_resident: SKIP (no fake driver)\n");
    return;
  }
  const uint64_t row = 3072, layer[2] = {0, 256 * 1024}, q = 900 * 1024, att = 950 * 1024, x = 960 * 1024;
  static rt_resident_launch L;
  cu_error err;
  for (int n = 24; n <= 40; n++)
    for (int l = 0; l < 2; l++) {
      uint64_t lo = layer[l] + (uint64_t)(n - 1) * row, hi = lo + row;
      /* k = W x: written straight into the host pages */
      rt_offload_plan k;
      memset(&k, 0, sizeof k);
      k.spans[0] = (rt_offload_span){x, x + row, false, false, false};
      k.spans[1] = (rt_offload_span){lo, hi, true, false, false};
      k.nspans = 2;
      ck_assert_msg(rt_resident_prepare(res, MEM, &k, true, &L, &err), "%s", err.message);
      for (size_t i = 0; i < L.nin; i++) memcpy(L.in[i].dev, L.in[i].host, L.in[i].len);
      memset(host + lo, n + l, row);
      /* rope on the CPU */
      for (uint64_t b = lo; b < hi; b += 8) host[b] ^= 0x5A;
      /* every head's scores over rows 0..n-1 */
      rt_offload_plan sc;
      memset(&sc, 0, sizeof sc);
      sc.spans[0] = (rt_offload_span){layer[l], hi, false, false, false};
      sc.spans[1] = (rt_offload_span){q, q + row, false, false, false};
      sc.spans[2] = (rt_offload_span){att, att + 12 * 64 * 4, true, false, false};
      sc.nspans = 3;
      uint64_t cost = rt_resident_cost_bytes(res, &sc, true);
      ck_assert_msg(rt_resident_prepare(res, MEM, &sc, true, &L, &err), "%s", err.message);
      for (size_t i = 0; i < L.nin; i++) memcpy(L.in[i].dev, L.in[i].host, L.in[i].len);
      ck_assert(memcmp(L.dev_base + layer[l], host + layer[l], hi - layer[l]) == 0);
      ck_assert(memcmp(L.dev_base + q, host + q, row) == 0);
      ck_assert_uint_eq(L.again_bytes, PAGE); /* q's page: short, not kept; the rows are */
      if (n == 24) continue; /* the span's first launch: all of it */
      uint64_t pages = (hi - 1) / PAGE - lo / PAGE + 1;
      ck_assert_msg(in_bytes(&L) == (pages + 1) * PAGE, "token %d layer %d: %llu bytes copied", n, l,
                    (unsigned long long)in_bytes(&L));
      ck_assert_uint_eq(cost, (pages + 1) * PAGE); /* att: written into the host pages */
    }
}
END_TEST

/* A read span of pages [lo, lo + n). */
static rt_offload_plan span_plan(uint64_t lo_page, uint64_t n) {
  rt_offload_plan p;
  memset(&p, 0, sizeof p);
  p.spans[0] = (rt_offload_span){lo_page * PAGE, (lo_page + n) * PAGE, false, false, false};
  p.nspans = 1;
  return p;
}

/* A page the CPU opens (a write to a layer's keys) forgets the spans it
 * lies in, not every span: the other weight matrices are not scanned
 * again (before: one count of opened pages for all, so every launch
 * after the write scanned its weights twice). */
START_TEST(resident_open_forgets_only_its_spans) {
  if (!fake_up()) {
    fprintf(stderr, "test_resident: SKIP (no fake driver)\n");
    return;
  }
  rt_offload_plan w1 = span_plan(0, 32), w2 = span_plan(100, 32);
  static rt_resident_launch L;
  cu_error err;
  for (int pass = 0; pass < 2; pass++) {
    ck_assert_msg(rt_resident_prepare(res, MEM, &w1, false, &L, &err), "%s", err.message);
    run(&L, &w1);
    ck_assert_msg(rt_resident_prepare(res, MEM, &w2, false, &L, &err), "%s", err.message);
    run(&L, &w2);
  }
  uint64_t s0 = rt_resident_scanned_pages(res);
  ck_assert_uint_eq(rt_resident_cost_bytes(res, &w1, false), 0);
  ck_assert_msg(rt_resident_prepare(res, MEM, &w1, false, &L, &err), "%s", err.message);
  ck_assert_uint_eq(rt_resident_scanned_pages(res), s0); /* noted: no scan */
  host[110 * PAGE + 3] = 42; /* the CPU writes into w2: a fault opens the page */
  ck_assert_uint_eq(unit_resident_faults(), 1);
  ck_assert_uint_eq(rt_resident_cost_bytes(res, &w1, false), 0);
  ck_assert_msg(rt_resident_prepare(res, MEM, &w1, false, &L, &err), "%s", err.message);
  ck_assert_uint_eq(L.nin, 0);
  ck_assert_msg(rt_resident_scanned_pages(res) == s0, "w1 scanned again: %llu pages",
                (unsigned long long)(rt_resident_scanned_pages(res) - s0));
  /* w2 is forgotten: scanned, its opened page copied and kept again */
  ck_assert_uint_eq(rt_resident_cost_bytes(res, &w2, false), PAGE);
  ck_assert_msg(rt_resident_prepare(res, MEM, &w2, false, &L, &err), "%s", err.message);
  ck_assert_uint_eq(in_bytes(&L), PAGE);
  run(&L, &w2);
  ck_assert_uint_eq(L.dev_base[110 * PAGE + 3], 42);
  ck_assert_uint_eq(rt_resident_scanned_pages(res), s0 + 64); /* cost's scan, then prepare's */
  ck_assert_uint_eq(rt_resident_cost_bytes(res, &w2, false), 0);
  ck_assert_uint_eq(rt_resident_scanned_pages(res), s0 + 64); /* noted again */
  /* a system call's buffer in w1 forgets w1 */
  rt_resident_touch(host + 5 * PAGE, 10);
  ck_assert_uint_eq(rt_resident_cost_bytes(res, &w1, false), PAGE);
  ck_assert_uint_eq(rt_resident_cost_bytes(res, &w2, false), 0);
}
END_TEST

/* An LLM token's 85 weight spans stay noted together (before: 64 slots
 * of one span each, so colliding spans evicted each other and were
 * scanned on every launch). */
START_TEST(resident_notes_a_token_of_weight_spans) {
  if (!fake_up()) {
    fprintf(stderr, "test_resident: SKIP (no fake driver)\n");
    return;
  }
  static rt_resident_launch L;
  cu_error err;
  for (int pass = 0; pass < 2; pass++)
    for (uint64_t j = 0; j < 100; j++) {
      rt_offload_plan p = span_plan(j, 16);
      (void)rt_resident_cost_bytes(res, &p, false);
      ck_assert_msg(rt_resident_prepare(res, MEM, &p, false, &L, &err), "%s", err.message);
      run(&L, &p);
    }
  uint64_t s0 = rt_resident_scanned_pages(res);
  for (uint64_t j = 0; j < 100; j++) {
    rt_offload_plan p = span_plan(j, 16);
    ck_assert_uint_eq(rt_resident_cost_bytes(res, &p, false), 0);
    ck_assert_msg(rt_resident_prepare(res, MEM, &p, false, &L, &err), "%s", err.message);
    ck_assert_uint_eq(L.nin, 0);
  }
  ck_assert_msg(rt_resident_scanned_pages(res) == s0, "%llu pages scanned again",
                (unsigned long long)(rt_resident_scanned_pages(res) - s0));
}
END_TEST

int main(void) {
  Suite *s = suite_create("resident");
  TCase *c = tcase_create("choice");
  tcase_add_test(c, choice_follows_the_model_until_measured);
  tcase_add_test(c, choice_leaves_a_slow_gpu_and_tries_again_later);
  tcase_add_test(c, choice_scales_measurements_by_work);
  tcase_add_test(c, choice_leaves_a_first_copy_out_of_the_rate);
  tcase_add_test(c, choice_measures_again_when_the_work_grew);
  suite_add_tcase(s, c);
  TCase *r = tcase_create("resident");
  tcase_add_checked_fixture(r, setup, teardown);
  tcase_add_test(r, resident_copies_once_and_keeps_long_spans);
  tcase_add_test(r, resident_abandon_forgets_uncopied_pages);
  tcase_add_test(r, resident_owns_only_kept_pages);
  tcase_add_test(r, resident_merges_near_copies);
  tcase_add_test(r, resident_host_out_moves_no_output);
  tcase_add_test(r, resident_host_out_keeps_no_written_page);
  tcase_add_test(r, resident_attention_copies_only_the_new_row);
  tcase_add_test(r, resident_open_forgets_only_its_spans);
  tcase_add_test(r, resident_notes_a_token_of_weight_spans);
  suite_add_tcase(s, r);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_FORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
