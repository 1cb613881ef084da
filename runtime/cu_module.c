/* cu_module.c: PTX modules: choosing the PTX of a set that the device and
 * driver can run, refusing texts the JIT must not see, and loading them
 * with the JIT logs captured. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "cu.h"

/* CUjit_option values, copied from the CUDA 13.0 cuda.h. */
enum {
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};
/* CUjitInputType. */
enum { CU_JIT_INPUT_PTX = 1 };

struct cu_module {
  void *handle; /* CUmodule */
  int arch;
};

/* The first driver release (1000*major + 10*minor) to accept each PTX ISA,
 * from the PTX ISA release notes; a driver accepts every ISA up to the
 * last row at or below its version. */
static const struct {
  int driver_version;
  int isa;
} cu_isa_table[] = {
    {9000, 60},  {9010, 61},  {9020, 62},  {10000, 63}, {10010, 64},
    {10020, 65}, {11000, 70}, {11010, 71}, {11020, 72}, {11030, 73},
    {11040, 74}, {11050, 75}, {11060, 76}, {11070, 77}, {11080, 78},
    {12000, 80}, {12010, 81}, {12020, 82}, {12030, 83}, {12040, 84},
    {12050, 85}, {12080, 87}, {12090, 88}, {13000, 90},
};

int cu_driver_max_isa(int driver_version) {
  int isa = 0;
  for (size_t i = 0; i < sizeof cu_isa_table / sizeof cu_isa_table[0]; i++)
    if (cu_isa_table[i].driver_version <= driver_version) isa = cu_isa_table[i].isa;
  return isa;
}

const char *cu_arch_name(int arch, char buf[16]) {
  snprintf(buf, 16, "sm_%d%s", arch & ~CU_ARCH_SPECIFIC, (arch & CU_ARCH_SPECIFIC) ? "a" : "");
  return buf;
}

/* Orders the archs a device can run: number first, then specific. */
static int cu_arch_rank(int arch) {
  return (arch & ~CU_ARCH_SPECIFIC) * 2 + ((arch & CU_ARCH_SPECIFIC) != 0);
}

int cu_pick_ptx_for(const cu_ptx *set, size_t n, int cc, int driver_version) {
  int max_isa = cu_driver_max_isa(driver_version);
  int best = -1;
  for (size_t i = 0; i < n; i++) {
    int number = set[i].arch & ~CU_ARCH_SPECIFIC;
    bool specific = (set[i].arch & CU_ARCH_SPECIFIC) != 0;
    if ((specific ? number != cc : number > cc) || set[i].isa > max_isa) continue;
    if (best < 0 || cu_arch_rank(set[i].arch) > cu_arch_rank(set[best].arch)) best = (int)i;
  }
  return best;
}

int cu_pick_ptx(const cu_ptx *set, size_t n) {
  const cu_device_info *d = cu_device();
  return d && cu_available() ? cu_pick_ptx_for(set, n, d->cc, d->driver_version) : -1;
}

/* The value after a directive at the start of a line, outside // comments:
 * ".version 7.8" -> "7.8". */
static const char *cu_ptx_directive(const char *text, const char *directive) {
  size_t len = strlen(directive);
  for (const char *line = text; line && *line;) {
    while (*line == ' ' || *line == '\t') line++;
    if (strncmp(line, directive, len) == 0 && (line[len] == ' ' || line[len] == '\t')) {
      const char *value = line + len;
      while (*value == ' ' || *value == '\t') value++;
      return value;
    }
    line = strchr(line, '\n');
    if (line) line++;
  }
  return NULL;
}

static bool cu_ptx_check_header(const cu_ptx *ptx, cu_error *err) {
  char name[16];
  int number = ptx->arch & ~CU_ARCH_SPECIFIC;
  bool specific = (ptx->arch & CU_ARCH_SPECIFIC) != 0;
  const char *version = cu_ptx_directive(ptx->text, ".version");
  int major = 0, minor = 0, arch = 0;
  char suffix = 0;
  if (!version || sscanf(version, "%d.%d", &major, &minor) != 2 || minor < 0 || minor > 9)
    return cu_fail_msg(err, "sm_%d PTX: no readable .version directive", number);
  if (major * 10 + minor != ptx->isa)
    return cu_fail_msg(err, "sm_%d PTX: .version %d.%d, but the set says ISA %d.%d", number,
                       major, minor, ptx->isa / 10, ptx->isa % 10);
  const char *target = cu_ptx_directive(ptx->text, ".target");
  int fields = target ? sscanf(target, "sm_%d%c", &arch, &suffix) : 0;
  if (fields < 1)
    return cu_fail_msg(err, "sm_%d PTX: no readable .target directive", number);
  /* sm_90a and the like run on one exact device only: picking by "not
   * above the device" would be wrong for them, so the set must say so. */
  bool suffixed = fields == 2 && suffix >= 'a' && suffix <= 'z';
  if (suffixed && (suffix != 'a' || !specific))
    return cu_fail_msg(err, "sm_%d PTX: arch-specific target sm_%d%c", number, arch, suffix);
  if (arch != number || suffixed != specific)
    return cu_fail_msg(err, "%s PTX: .target sm_%d%s disagrees", cu_arch_name(ptx->arch, name), arch,
                       suffixed ? "a" : "");
  return true;
}

bool cu_ptx_check(const cu_ptx *ptx, cu_error *err) {
  if (!ptx->text) return cu_fail_msg(err, "sm_%d PTX: no text", ptx->arch & ~CU_ARCH_SPECIFIC);
  /* One non-ASCII byte makes the JIT reject the whole module. */
  for (size_t i = 0; ptx->text[i]; i++) {
    unsigned char c = (unsigned char)ptx->text[i];
    if (c >= 0x80)
      return cu_fail_msg(err, "sm_%d PTX: non-ASCII byte 0x%02x at offset %zu", ptx->arch & ~CU_ARCH_SPECIFIC, c, i);
  }
  return cu_ptx_check_header(ptx, err);
}

/* Appends the JIT's log to a failure message. */
static void cu_append_log(cu_error *err, const char *label, const char *log) {
  if (!err || !*log) return;
  size_t n = strlen(err->message);
  snprintf(err->message + n, sizeof err->message - n, "\n%s:\n%s", label, log);
}

static double cu_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* A failed load or compile: the result, the JIT's log, and a sticky state
 * of the context looked for. */
static bool cu_jit_failed(const cu_ptx *ptx, const char *call, cu_result r, const char *log, cu_error *err) {
  char what[64];
  snprintf(what, sizeof what, "%s (sm_%d PTX)", call, ptx->arch & ~CU_ARCH_SPECIFIC);
  cu_check_failure(err, what, r);
  cu_append_log(err, "JIT error log", log);
  /* A failed load can poison the context without saying so in its own
   * result: ask once, so a sticky state is found here and not later. */
  if (cu_available()) {
    r = cu_drv.ctx_synchronize();
    if (r != 0) cu_check_failure(NULL, "cuCtxSynchronize after a failed module load", r);
  }
  return false;
}

/* The PTX to a cubin with the driver's linker (whose results the driver's
 * JIT cache keeps, as it does a module's). */
static bool cu_link(cu_image *img, cu_error *err) {
  char error_log[4096] = {0}, info_log[2048] = {0};
  int opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {error_log, (void *)(uintptr_t)(sizeof error_log - 1),
                    info_log, (void *)(uintptr_t)(sizeof info_log - 1)};
  const cu_ptx *ptx = img->ptx;
  cu_result r = cu_drv.link_create(4, opts, values, &img->link);
  if (r != 0) {
    img->link = NULL;
    return cu_jit_failed(ptx, "cuLinkCreate", r, error_log, err);
  }
  r = cu_drv.link_add_data(img->link, CU_JIT_INPUT_PTX, (void *)ptx->text, strlen(ptx->text) + 1, "twasm", 0,
                           NULL, NULL);
  const char *call = "cuLinkAddData";
  size_t size = 0;
  if (r == 0) {
    call = "cuLinkComplete";
    r = cu_drv.link_complete(img->link, &img->cubin, &size);
  }
  if (r != 0) {
    cu_image_drop(img);
    return cu_jit_failed(ptx, call, r, error_log, err);
  }
  if (*info_log) cu_trace("gpu: JIT of sm_%d PTX says: %s", ptx->arch & ~CU_ARCH_SPECIFIC, info_log);
  return true;
}

bool cu_module_compile(const cu_ptx *set, size_t n, cu_image *out, cu_error *err) {
  *out = (cu_image){0};
  if (!cu_make_current(err)) return false;
  const cu_device_info *d = cu_device();
  int pick = cu_pick_ptx_for(set, n, d->cc, d->driver_version);
  int max_isa = cu_driver_max_isa(d->driver_version);
  if (pick < 0)
    return cu_fail_msg(err, "no PTX of %zu fits sm_%d with driver %d.%d (PTX ISA up to %d.%d)",
                       n, d->cc, d->driver_version / 1000, d->driver_version % 1000 / 10,
                       max_isa / 10, max_isa % 10);
  out->ptx = &set[pick];
  if (!cu_ptx_check(out->ptx, err)) return false;
  if (!cu_drv.link_create) return true;
  double t0 = cu_now_ms();
  if (!cu_link(out, err)) return false;
  out->compile_ms = cu_now_ms() - t0;
  return true;
}

void cu_image_drop(cu_image *img) {
  if (img->link) {
    cu_result r = cu_drv.link_destroy(img->link);
    if (r != 0) cu_check_failure(NULL, "cuLinkDestroy", r);
  }
  img->link = img->cubin = NULL;
}

/* Without the linker: the PTX loaded and compiled at once. */
static cu_result cu_load_ptx(const cu_ptx *ptx, void **handle, char *error_log, size_t cap) {
  char info_log[2048] = {0};
  int opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {error_log, (void *)(uintptr_t)(cap - 1), info_log, (void *)(uintptr_t)(sizeof info_log - 1)};
  cu_result r = cu_drv.module_load_data_ex(handle, ptx->text, 4, opts, values);
  if (r == 0 && *info_log) cu_trace("gpu: JIT of sm_%d PTX says: %s", ptx->arch & ~CU_ARCH_SPECIFIC, info_log);
  return r;
}

bool cu_module_install(cu_image *img, cu_module **out, cu_error *err) {
  const cu_ptx *ptx = img->ptx;
  bool cubin = img->cubin != NULL;
  if (!cu_make_current(err)) {
    cu_image_drop(img);
    return false;
  }
  cu_module *m = calloc(1, sizeof *m);
  if (!m) {
    cu_image_drop(img);
    return cu_fail_msg(err, "out of host memory for a module");
  }
  double t0 = cu_now_ms();
  char error_log[4096] = {0};
  cu_result r = cubin ? cu_drv.module_load_data(&m->handle, img->cubin)
                      : cu_load_ptx(ptx, &m->handle, error_log, sizeof error_log);
  cu_image_drop(img);
  if (r != 0) {
    free(m);
    return cu_jit_failed(ptx, cubin ? "cuModuleLoadData" : "cuModuleLoadDataEx", r, error_log, err);
  }
  m->arch = ptx->arch;
  char name[16];
  cu_trace("gpu: loaded %s PTX (ISA %d.%d) on sm_%d in %.1f ms (compiled in %.1f ms, then loaded in %.1f ms)",
           cu_arch_name(ptx->arch, name), ptx->isa / 10, ptx->isa % 10, cu_device()->cc,
           img->compile_ms + cu_now_ms() - t0, img->compile_ms, cu_now_ms() - t0);
  *out = m;
  return true;
}

bool cu_module_load(const cu_ptx *set, size_t n, cu_module **out, cu_error *err) {
  cu_image img;
  return cu_module_compile(set, n, &img, err) && cu_module_install(&img, out, err);
}

bool cu_module_kernel(cu_module *m, const char *name, cu_kernel *out, cu_error *err) {
  if (!cu_make_current(err)) return false;
  void *function = NULL;
  cu_result r = cu_drv.module_get_function(&function, m->handle, name);
  if (r != 0) {
    char what[160];
    snprintf(what, sizeof what, "cuModuleGetFunction(%.120s)", name);
    return cu_check_failure(err, what, r);
  }
  *out = (cu_kernel){function, name};
  return true;
}

int cu_module_arch(const cu_module *m) { return m->arch; }

void cu_module_unload(cu_module *m) {
  if (!m) return;
  cu_error err;
  /* After a sticky error the context, and the module with it, is gone. */
  if (cu_make_current(&err)) {
    cu_result r = cu_drv.module_unload(m->handle);
    if (r != 0) cu_check_failure(NULL, "cuModuleUnload", r);
  }
  free(m);
}
