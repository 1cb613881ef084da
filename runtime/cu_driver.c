/* cu_driver.c: opens libcuda.so.1 at run time, resolves the entry points
 * the layer uses, and turns CUresult codes into messages. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cu.h"

/* The CUresult values named here, copied from the CUDA 13.0 cuda.h. */
enum {
  CU_ERR_DEINITIALIZED = 4,
  CU_ERR_DEVICE_UNAVAILABLE = 46,
  CU_ERR_ECC_UNCORRECTABLE = 214,
  CU_ERR_NVLINK_UNCORRECTABLE = 220,
  CU_ERR_CONTAINED = 226,
  CU_ERR_ILLEGAL_ADDRESS = 700,
  CU_ERR_LAUNCH_TIMEOUT = 702,
  CU_ERR_CONTEXT_IS_DESTROYED = 709,
  CU_ERR_ASSERT = 710,
  CU_ERR_HARDWARE_STACK_ERROR = 714,
  CU_ERR_ILLEGAL_INSTRUCTION = 715,
  CU_ERR_MISALIGNED_ADDRESS = 716,
  CU_ERR_INVALID_ADDRESS_SPACE = 717,
  CU_ERR_INVALID_PC = 718,
  CU_ERR_LAUNCH_FAILED = 719,
  CU_ERR_TENSOR_MEMORY_LEAK = 721,
  CU_ERR_UNKNOWN = 999,
};

/* Errors after which the header says the context (or the process) cannot
 * do any more CUDA work. */
static const cu_result cu_sticky_codes[] = {
    CU_ERR_DEINITIALIZED,        CU_ERR_DEVICE_UNAVAILABLE,
    CU_ERR_ECC_UNCORRECTABLE,    CU_ERR_NVLINK_UNCORRECTABLE,
    CU_ERR_CONTAINED,            CU_ERR_ILLEGAL_ADDRESS,
    CU_ERR_LAUNCH_TIMEOUT,       CU_ERR_CONTEXT_IS_DESTROYED,
    CU_ERR_ASSERT,               CU_ERR_HARDWARE_STACK_ERROR,
    CU_ERR_ILLEGAL_INSTRUCTION,  CU_ERR_MISALIGNED_ADDRESS,
    CU_ERR_INVALID_ADDRESS_SPACE, CU_ERR_INVALID_PC,
    CU_ERR_LAUNCH_FAILED,        CU_ERR_TENSOR_MEMORY_LEAK,
    CU_ERR_UNKNOWN,
};

bool cu_is_sticky(cu_result code) {
  for (size_t i = 0; i < sizeof cu_sticky_codes / sizeof cu_sticky_codes[0]; i++)
    if (cu_sticky_codes[i] == code) return true;
  return false;
}

/* Symbol names are those the 13.0 header maps the API names to. */
#define CU_SYM(field, symbol) {offsetof(cu_driver, field), symbol}
static const struct {
  size_t offset;
  const char *symbol;
} cu_required[] = {
    CU_SYM(init, "cuInit"),
    CU_SYM(driver_get_version, "cuDriverGetVersion"),
    CU_SYM(device_get, "cuDeviceGet"),
    CU_SYM(device_get_attribute, "cuDeviceGetAttribute"),
    CU_SYM(device_get_name, "cuDeviceGetName"),
    CU_SYM(primary_ctx_retain, "cuDevicePrimaryCtxRetain"),
    CU_SYM(primary_ctx_release, "cuDevicePrimaryCtxRelease_v2"),
    CU_SYM(ctx_set_current, "cuCtxSetCurrent"),
    CU_SYM(ctx_synchronize, "cuCtxSynchronize"),
    CU_SYM(mem_get_info, "cuMemGetInfo_v2"),
    CU_SYM(mem_alloc_managed, "cuMemAllocManaged"),
    CU_SYM(mem_free, "cuMemFree_v2"),
    CU_SYM(module_load_data_ex, "cuModuleLoadDataEx"),
    CU_SYM(module_get_function, "cuModuleGetFunction"),
    CU_SYM(module_unload, "cuModuleUnload"),
    CU_SYM(launch_kernel, "cuLaunchKernel"),
    CU_SYM(get_error_name, "cuGetErrorName"),
    CU_SYM(get_error_string, "cuGetErrorString"),
};

/* dlsym returns an object pointer; POSIX guarantees it converts to a
 * function pointer, which memcpy does without a cast warning. */
static bool cu_resolve(void *lib, const char *symbol, void *slot) {
  void *p = dlsym(lib, symbol);
  if (!p) return false;
  memcpy(slot, &p, sizeof p);
  return true;
}

bool cu_driver_open(const char *soname, cu_driver *d, char *reason, size_t reason_len) {
  memset(d, 0, sizeof *d);
  void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    if (!why || strstr(why, "No such file"))
      snprintf(reason, reason_len, "%s not found", soname);
    else
      snprintf(reason, reason_len, "cannot load %s: %s", soname, why);
    return false;
  }
  for (size_t i = 0; i < sizeof cu_required / sizeof cu_required[0]; i++) {
    if (!cu_resolve(lib, cu_required[i].symbol, (char *)d + cu_required[i].offset)) {
      snprintf(reason, reason_len, "%s lacks %s", soname, cu_required[i].symbol);
      memset(d, 0, sizeof *d); /* no pointers into the library once closed */
      dlclose(lib);
      return false;
    }
  }
  /* cuMemPrefetchAsync_v2 arrived with CUDA 12.2; older drivers only have
   * the device-ordinal form.  Neither is needed to run kernels. */
  if (!cu_resolve(lib, "cuMemPrefetchAsync_v2", &d->mem_prefetch_v2))
    cu_resolve(lib, "cuMemPrefetchAsync", &d->mem_prefetch_v1);
  /* Only the packed tensor-core product needs these. */
  cu_resolve(lib, "cuMemAlloc_v2", &d->mem_alloc);
  cu_resolve(lib, "cuFuncSetAttribute", &d->func_set_attribute);
  cu_resolve(lib, "cuMemHostRegister_v2", &d->mem_host_register);
  cu_resolve(lib, "cuMemHostUnregister", &d->mem_host_unregister);
  cu_resolve(lib, "cuMemcpyHtoDAsync_v2", &d->memcpy_htod_async);
  cu_resolve(lib, "cuMemcpyDtoHAsync_v2", &d->memcpy_dtoh_async);
  cu_resolve(lib, "cuMemcpyDtoD_v2", &d->memcpy_dtod);
  cu_resolve(lib, "cuDevicePrimaryCtxSetFlags_v2", &d->primary_ctx_set_flags);
  cu_resolve(lib, "cuStreamSynchronize", &d->stream_synchronize);
  cu_resolve(lib, "cuStreamQuery", &d->stream_query);
  /* All of the linker's calls, or none. */
  if (!cu_resolve(lib, "cuLinkCreate_v2", &d->link_create) ||
      !cu_resolve(lib, "cuLinkAddData_v2", &d->link_add_data) ||
      !cu_resolve(lib, "cuLinkComplete", &d->link_complete) || !cu_resolve(lib, "cuLinkDestroy", &d->link_destroy) ||
      !cu_resolve(lib, "cuModuleLoadData", &d->module_load_data))
    d->link_create = NULL;
  /* All of the graph calls, or none (CUDA 12.0 and later). */
  if (!cu_resolve(lib, "cuGraphCreate", &d->graph_create) ||
      !cu_resolve(lib, "cuGraphAddKernelNode_v2", &d->graph_add_kernel_node) ||
      !cu_resolve(lib, "cuGraphInstantiateWithFlags", &d->graph_instantiate) ||
      !cu_resolve(lib, "cuGraphLaunch", &d->graph_launch) || !cu_resolve(lib, "cuGraphDestroy", &d->graph_destroy) ||
      !cu_resolve(lib, "cuGraphExecDestroy", &d->graph_exec_destroy))
    d->graph_create = NULL;
  cu_resolve(lib, "cuGraphExecKernelNodeSetParams_v2", &d->graph_exec_kernel_node_set_params);
  /* Never closed: the primary context stays retained for the process. */
  return true;
}

bool cu_driver_loadable(const char *soname) {
  /* Lazy binding: resolving every symbol now would cost more than the
   * question is worth; cu_driver_open binds what it uses. */
  return dlopen(soname, RTLD_LAZY | RTLD_LOCAL) != NULL;
}

bool cu_fail_msg(cu_error *err, const char *fmt, ...) {
  if (!err) return false;
  err->code = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
  return false;
}

bool cu_fail(cu_error *err, const char *what, cu_result code) {
  if (!err) return false;
  const char *name = NULL, *text = NULL;
  /* Before the driver is open (or if it cannot name the code) the number
   * is all there is. */
  if (cu_drv.get_error_name && cu_drv.get_error_name(code, &name) != 0) name = NULL;
  if (cu_drv.get_error_string && cu_drv.get_error_string(code, &text) != 0) text = NULL;
  if (name)
    snprintf(err->message, sizeof err->message, "%s: %s (%s)", what, name,
             text ? text : "no description");
  else
    snprintf(err->message, sizeof err->message, "%s: CUresult %d", what, code);
  err->code = code;
  return false;
}
