/* unit_mv.h: what the matrix-vector variant suites (test_ptx_mv_ws,
 * test_ptx_mv_pdl) share: a matvec descriptor as the detector emits it,
 * its PTX for sm_75, sm_80 and sm_90, ptxas on a text, and counting. */
#ifndef UNIT_MV_H
#define UNIT_MV_H

#include <stdbool.h>

#include "ptx.h"

/* Occurrences of what in text. */
unsigned mv_count_of(const char *text, const char *what);

/* ptxas ($PTXAS, else /usr/local/cuda/bin/ptxas) on text for sm_XX: true
 * when it assembles or ptxas is absent. */
bool mv_assembles(const char *text, unsigned sm);

/* out[o] = sum_k W[o * p3 + k] * v[k] of type, generated for sm_75, sm_80
 * and sm_90 (asserts each is the matrix-vector path). */
void mv_generate(kn_mm_type type, const char *name, tw_arena *arena, ptx_out *out);

#endif
