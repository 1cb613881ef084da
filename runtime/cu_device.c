/* cu_device.c: the process's one GPU: initialisation (once, thread-safe),
 * device 0's properties, its retained primary context, and the switch that
 * turns the GPU off for good after a sticky error. */
#include <pthread.h>
#include <time.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"

/* CUdevice_attribute values, copied from the CUDA 13.0 cuda.h. */
enum {
  CU_ATTR_CC_MAJOR = 75,
  CU_ATTR_CC_MINOR = 76,
  CU_ATTR_MANAGED_MEMORY = 83,
  CU_ATTR_PAGEABLE_MEMORY_ACCESS = 88,
  CU_ATTR_CONCURRENT_MANAGED_ACCESS = 89,
  CU_ATTR_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = 91,
  CU_ATTR_HOST_REGISTER_SUPPORTED = 99,
};

cu_driver cu_drv;
int cu_dev;

static const char *cu_soname = "libcuda.so.1";
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;
static void *cu_ctx;                 /* the retained primary context */
static cu_device_info cu_info;
static bool cu_up;                   /* initialisation succeeded */
static atomic_bool cu_done;          /* set last by cu_init, whatever came of it */
static pthread_once_t cu_probe_once = PTHREAD_ONCE_INIT;
static bool cu_probe_found;
static char cu_init_reason[sizeof ((cu_error *)0)->message]; /* why not */
/* Set once, after cu_dead_reason is complete, by the first sticky error. */
static atomic_bool cu_dead;
static char cu_dead_reason[1200];
static pthread_mutex_t cu_dead_lock = PTHREAD_MUTEX_INITIALIZER;

void cu_test_use_library(const char *soname) { cu_soname = soname; }

static bool cu_init_refuse(const char *what, cu_result code) {
  cu_error err;
  cu_fail(&err, what, code);
  snprintf(cu_init_reason, sizeof cu_init_reason, "%s", err.message);
  return false;
}

/* Environment, library, cuInit: everything before a device is touched. */
static bool cu_init_driver(void) {
  if (cu_mode_get() == CU_MODE_CPU) {
    const char *asked = getenv("TWASM_DEVICE");
    snprintf(cu_init_reason, sizeof cu_init_reason, "TWASM_DEVICE=%.200s", asked ? asked : "cpu");
    return false;
  }
  const char *cap = getenv("TWASM_GPU_MEM_CAP");
  if (cap && *cap && !cu_parse_size(cap, &cu_info.mem_cap)) {
    snprintf(cu_init_reason, sizeof cu_init_reason,
             "TWASM_GPU_MEM_CAP=%s is not a size (bytes, or with a K, M or G suffix)", cap);
    return false;
  }
  if (!cu_driver_open(cu_soname, &cu_drv, cu_init_reason, sizeof cu_init_reason))
    return false;
  cu_result r = cu_drv.init(0);
  if (r != 0) return cu_init_refuse("cuInit", r);
  r = cu_drv.driver_get_version(&cu_info.driver_version);
  if (r != 0) return cu_init_refuse("cuDriverGetVersion", r);
  return true;
}

static bool cu_init_device(void) {
  cu_result r = cu_drv.device_get(&cu_dev, 0);
  if (r != 0) return cu_init_refuse("cuDeviceGet", r);
  int major = 0, minor = 0, managed = 0, concurrent = 0, pageable = 0, host_pointer = 0,
      host_register = 0;
  const struct {
    int attribute;
    int *value;
  } attrs[] = {
      {CU_ATTR_CC_MAJOR, &major},
      {CU_ATTR_CC_MINOR, &minor},
      {CU_ATTR_MANAGED_MEMORY, &managed},
      {CU_ATTR_CONCURRENT_MANAGED_ACCESS, &concurrent},
      {CU_ATTR_PAGEABLE_MEMORY_ACCESS, &pageable},
      {CU_ATTR_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM, &host_pointer},
      {CU_ATTR_HOST_REGISTER_SUPPORTED, &host_register},
  };
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
    r = cu_drv.device_get_attribute(attrs[i].value, attrs[i].attribute, cu_dev);
    if (r != 0) return cu_init_refuse("cuDeviceGetAttribute", r);
  }
  r = cu_drv.device_get_name(cu_info.name, (int)sizeof cu_info.name, cu_dev);
  if (r != 0) return cu_init_refuse("cuDeviceGetName", r);
  cu_info.cc = major * 10 + minor;
  cu_info.concurrent_managed = concurrent != 0;
  cu_info.pageable_access = pageable != 0;
  cu_info.host_register = host_register && host_pointer;
  if (!managed) {
    snprintf(cu_init_reason, sizeof cu_init_reason,
             "%s cannot allocate managed memory", cu_info.name);
    return false;
  }
  return true;
}

/* TWASM_GPU_SCHED=spin|yield|block: how a synchronise waits
 * (CU_CTX_SCHED_*), set on the primary context before it is made; unset,
 * the driver's default (auto: spin while there are fewer contexts than
 * cores). */
static void cu_init_sched(void) {
  static const struct {
    const char *name;
    unsigned flags;
  } modes[] = {{"spin", 1}, {"yield", 2}, {"block", 4}};
  const char *v = getenv("TWASM_GPU_SCHED");
  if (!v || !*v || !cu_drv.primary_ctx_set_flags) return;
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
    if (strcmp(v, modes[i].name) == 0) {
      cu_result r = cu_drv.primary_ctx_set_flags(cu_dev, modes[i].flags);
      cu_trace("gpu: TWASM_GPU_SCHED=%s: %s", v, r == 0 ? "set" : "refused by the driver");
      return;
    }
  cu_trace("gpu: TWASM_GPU_SCHED=%s is not spin, yield or block: ignored", v);
}

static bool cu_init_context(void) {
  cu_init_sched();
  cu_result r = cu_drv.primary_ctx_retain(&cu_ctx, cu_dev);
  if (r != 0) return cu_init_refuse("cuDevicePrimaryCtxRetain", r);
  size_t free_bytes = 0, total_bytes = 0;
  r = cu_drv.ctx_set_current(cu_ctx);
  if (r == 0) r = cu_drv.mem_get_info(&free_bytes, &total_bytes);
  if (r != 0) {
    cu_init_refuse("cuCtxSetCurrent/cuMemGetInfo", r);
    cu_drv.primary_ctx_release(cu_dev);
    return false;
  }
  cu_info.free_bytes = free_bytes;
  cu_info.total_bytes = total_bytes;
  return true;
}

static double cu_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void cu_init(void) {
  double start = cu_ms();
  if (!cu_init_driver() || !cu_init_device() || !cu_init_context()) {
    cu_trace("gpu unavailable: %s", cu_init_reason);
    atomic_store(&cu_done, true);
    return;
  }
  cu_up = true;
  cu_trace("gpu: %s sm_%d, driver %d.%d, concurrentManagedAccess=%d, pageableMemoryAccess=%d, "
           "hostRegister=%d, %llu MiB free of %llu MiB%s; initialised in %.0f ms",
           cu_info.name, cu_info.cc, cu_info.driver_version / 1000,
           cu_info.driver_version % 1000 / 10, cu_info.concurrent_managed,
           cu_info.pageable_access, cu_info.host_register,
           (unsigned long long)(cu_info.free_bytes >> 20),
           (unsigned long long)(cu_info.total_bytes >> 20),
           cu_info.mem_cap ? ", capped by TWASM_GPU_MEM_CAP" : "", cu_ms() - start);
  atomic_store(&cu_done, true);
}

bool cu_started(void) { return atomic_load(&cu_done); }

bool cu_ready(void) { return atomic_load(&cu_done) && cu_up && !atomic_load(&cu_dead); }

static void cu_probe(void) {
  double start = cu_ms();
  cu_probe_found = cu_mode_get() != CU_MODE_CPU && cu_driver_loadable(cu_soname);
  cu_trace("gpu: %s %s (%.1f ms)", cu_soname, cu_probe_found ? "found" : "not found", cu_ms() - start);
}

bool cu_driver_present(void) {
  pthread_once(&cu_probe_once, cu_probe);
  return cu_probe_found;
}

bool cu_available(void) {
  pthread_once(&cu_once, cu_init);
  return cu_up && !atomic_load(&cu_dead);
}

const char *cu_unavailable_reason(void) {
  pthread_once(&cu_once, cu_init);
  if (!cu_up) return cu_init_reason;
  return atomic_load(&cu_dead) ? cu_dead_reason : "";
}

const cu_device_info *cu_device(void) {
  pthread_once(&cu_once, cu_init);
  return cu_up ? &cu_info : NULL;
}

bool cu_make_current(cu_error *err) {
  if (!cu_available())
    return cu_fail_msg(err, "GPU unavailable: %s", cu_unavailable_reason());
  /* Cheap, and robust against host code that binds another context. */
  cu_result r = cu_drv.ctx_set_current(cu_ctx);
  return r == 0 || cu_check_failure(err, "cuCtxSetCurrent", r);
}

void cu_disable(cu_error *err) {
  pthread_mutex_lock(&cu_dead_lock);
  if (!atomic_load(&cu_dead)) {
    snprintf(cu_dead_reason, sizeof cu_dead_reason, "disabled after %s", err->message);
    atomic_store(&cu_dead, true);
    cu_trace("gpu disabled for the rest of the process: %s; the cpu carries on",
             err->message);
  }
  pthread_mutex_unlock(&cu_dead_lock);
  size_t n = strlen(err->message);
  snprintf(err->message + n, sizeof err->message - n,
           "; GPU disabled for the rest of the process");
}

bool cu_check_failure(cu_error *err, const char *what, cu_result code) {
  cu_error local;
  if (!err) err = &local;
  cu_fail(err, what, code);
  if (cu_is_sticky(code)) cu_disable(err);
  return false;
}
