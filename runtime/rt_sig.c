/* rt_sig.c: process-wide canonical signature ids, so equal function types
 * of different modules compare equal in call_indirect and linking. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

#define RT_SIG_BUCKETS 256u

static pthread_mutex_t rt_sig_lock = PTHREAD_MUTEX_INITIALIZER;
static rt_sig *rt_sig_table[RT_SIG_BUCKETS];
static uint32_t rt_sig_next_id;

static uint32_t sig_hash(uint32_t nparams, uint32_t nresults, const uint8_t *types) {
  uint32_t h = 2166136261u ^ (nparams * 31u + nresults);
  for (uint32_t i = 0; i < nparams + nresults; i++) h = (h ^ types[i]) * 16777619u;
  return h % RT_SIG_BUCKETS;
}

static bool sig_equal(const rt_sig *s, uint32_t nparams, uint32_t nresults, const uint8_t *types) {
  if (s->nparams != nparams || s->nresults != nresults) return false;
  for (uint32_t i = 0; i < nparams + nresults; i++)
    if (s->kinds[i] != (twasm_valkind)types[i]) return false;
  return true;
}

static rt_sig *sig_create(uint32_t nparams, uint32_t nresults, const uint8_t *types) {
  uint32_t n = nparams + nresults;
  rt_sig *s = malloc(sizeof *s + (n ? n : 1) * sizeof(twasm_valkind));
  if (!s) return NULL;
  s->nparams = nparams;
  s->nresults = nresults;
  s->kinds = (twasm_valkind *)(s + 1);
  for (uint32_t i = 0; i < n; i++) s->kinds[i] = (twasm_valkind)types[i];
  return s;
}

const rt_sig *rt_sig_intern(uint32_t nparams, uint32_t nresults, const uint8_t *types) {
  uint32_t h = sig_hash(nparams, nresults, types);
  pthread_mutex_lock(&rt_sig_lock);
  rt_sig *s = rt_sig_table[h];
  while (s && !sig_equal(s, nparams, nresults, types)) s = s->next;
  if (!s && (s = sig_create(nparams, nresults, types)) != NULL) {
    s->id = ++rt_sig_next_id; /* 0 never names a type */
    s->next = rt_sig_table[h];
    rt_sig_table[h] = s;
  }
  pthread_mutex_unlock(&rt_sig_lock);
  return s;
}
