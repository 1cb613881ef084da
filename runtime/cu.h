/* cu.h: the runtime's CUDA driver layer (prefix cu_): driver loading,
 * device state, managed memory, PTX modules and kernel launches.  Nothing
 * here needs CUDA to build: libcuda.so.1 is opened at run time, and when it
 * (or a device) is missing every entry point reports "unavailable" so the
 * CPU path carries on. */
#ifndef CU_H
#define CU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A failure: the driver's CUresult (0 when the failure is ours) and a
 * message that names it ("cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS
 * (...)"), with the JIT log for module loads. */
typedef struct cu_error {
  int code;
  char message[1024];
} cu_error;

/* ---- environment (cu_env.c) ------------------------------------------- */

/* TWASM_DEVICE: cpu never touches the driver; gpu offloads whenever a GPU
 * is usable, skipping the cost model; auto lets the cost model decide. */
typedef enum { CU_MODE_AUTO, CU_MODE_CPU, CU_MODE_GPU } cu_mode;

bool cu_parse_mode(const char *text, cu_mode *out);
/* "4096", "64K", "512M", "2G" (binary multiples); false on anything else
 * or on overflow. */
bool cu_parse_size(const char *text, uint64_t *out);
/* The mode asked for (read once); an unknown value counts as cpu. */
cu_mode cu_mode_get(void);
/* One line to stderr, "twasm: " first, when TWASM_TRACE=1; the one place
 * the layer prints, and the switch the offload code shares. */
bool cu_tracing(void);
void cu_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- device state (cu_device.c) --------------------------------------- */

typedef struct cu_device_info {
  char name[128];
  int cc;                    /* compute capability as 10*major+minor: 90 */
  int driver_version;        /* as cuDriverGetVersion: 13000 */
  bool concurrent_managed;   /* CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS */
  bool pageable_access;      /* CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: the device
                                reads and writes any host memory coherently (HMM) */
  bool host_register;        /* cuMemHostRegister works and the device then uses the
                                host's addresses (HOST_REGISTER_SUPPORTED and
                                CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM) */
  uint64_t total_bytes;
  uint64_t free_bytes;       /* at initialisation */
  uint64_t mem_cap;          /* TWASM_GPU_MEM_CAP, 0 when unset */
} cu_device_info;

/* Initialises the layer once per process (thread-safe) and says whether
 * the GPU may be used now; false forever after a sticky error.  The first
 * call pays the driver's start (cuInit and the primary context: about
 * 275 ms on the H100); callers that must not wait ask cu_started first. */
bool cu_available(void);
/* Whether initialisation has finished, either way; never starts or waits
 * for it.  Once true, cu_available() returns at once. */
bool cu_started(void);
/* cu_started() and cu_available(): the GPU is up now, without waiting. */
bool cu_ready(void);
/* Whether the driver library can be opened at all (dlopen, no cuInit;
 * once per process); false under TWASM_DEVICE=cpu. */
bool cu_driver_present(void);
/* Why cu_available() is false ("libcuda.so.1 not found", "TWASM_DEVICE=cpu",
 * "disabled after CUDA_ERROR_ILLEGAL_ADDRESS ..."); "" while available. */
const char *cu_unavailable_reason(void);
/* Device 0 as found at initialisation; NULL when the GPU never came up. */
const cu_device_info *cu_device(void);
/* Binds the primary context to the calling thread; every cu_ entry point
 * that calls the driver does this first. */
bool cu_make_current(cu_error *err);

/* ---- managed memory (cu_mem.c) ---------------------------------------- */

/* Admission of a new managed allocation of size bytes: live is what is
 * allocated already, cap the TWASM_GPU_MEM_CAP (0: none), free/total from
 * cuMemGetInfo.  Refuses past the cap or past free memory less a margin. */
bool cu_mem_admit(uint64_t size, uint64_t live, uint64_t cap,
                  uint64_t free_bytes, uint64_t total_bytes, cu_error *err);
bool cu_alloc_managed(uint64_t size, void **out, cu_error *err);
/* A managed reservation of size bytes of which only `admitted` will ever
 * be touched (the rest stays PROT_NONE, a guard region): only that much
 * counts against the cap and the device's free memory. */
bool cu_reserve_managed(uint64_t size, uint64_t admitted, void **out, cu_error *err);
void cu_free_managed(void *ptr);
/* Moves [ptr, ptr+len) to the device ahead of a launch; a no-op (true)
 * where the device lacks concurrentManagedAccess. */
bool cu_prefetch(const void *ptr, uint64_t len, cu_error *err);
/* Device (not managed) memory, for scratch only kernels touch: under the
 * same admission as managed memory, but not in the registry (no range a
 * launch is checked against may lie in it). */
bool cu_alloc_device(uint64_t size, void **out, cu_error *err);
void cu_free_device(void *ptr, uint64_t size);
/* Device memory standing in for host memory (rt_resident.c): counted
 * like managed memory, registered so that launches' range checks accept
 * it, never prefetched.  cu_mirror_move copies len bytes from one such
 * block to another (device to device, synchronised). */
bool cu_alloc_mirror(uint64_t size, void **out, cu_error *err);
void cu_free_mirror(void *ptr);
bool cu_mirror_move(void *to, const void *from, uint64_t len, cu_error *err);

/* Host memory made reachable by kernels, for linear memory reserved
 * before the driver started (its base never moves).  [base, base+reserve)
 * is the reservation, of which `admitted` bytes may ever be used; open the
 * part in use now.  Where the device has pageable_access the whole
 * reservation is reachable as it is (CU_HOST_PAGEABLE; prefetched like
 * managed memory, counted against the cap like it); else, where it has
 * host_register, the open part is pinned and mapped (CU_HOST_PINNED: read
 * and written over the bus, never migrated), and cu_host_extend pins what
 * the memory grew by.  False (err says why) where neither is possible. */
typedef enum { CU_HOST_PAGEABLE = 1, CU_HOST_PINNED = 2 } cu_host_kind;
bool cu_host_expose(void *base, uint64_t reserve, uint64_t admitted, uint64_t open,
                    cu_host_kind *kind, cu_error *err);
bool cu_host_extend(void *base, uint64_t open, cu_error *err);
/* Bytes from ptr to the end of the registered piece of pinned host
 * memory holding it (each growth is a piece of its own); UINT64_MAX
 * outside pinned memory.  An engine copy may not cross a piece's end:
 * the driver refuses it (CUDA_ERROR_INVALID_VALUE). */
uint64_t cu_host_piece_left(const void *ptr);
/* Before the reservation is unmapped: unpins and forgets it. */
void cu_host_forget(void *base);
/* Whether [ptr, ptr+len) lies inside one live managed allocation or one
 * exposed host memory's reachable part: what a kernel may touch. */
bool cu_reachable(const void *ptr, uint64_t len);

/* ---- PTX modules (cu_module.c) ---------------------------------------- */

/* One PTX text of a set: the sm_XX it targets (75, 80, 90; with
 * CU_ARCH_SPECIFIC: sm_XXa, which runs on compute capability XX only) and
 * the PTX ISA its .version says (63 for 6.3, 78 for 7.8). */
#define CU_ARCH_SPECIFIC 0x10000
typedef struct cu_ptx {
  int arch;
  int isa;
  const char *text;
} cu_ptx;

/* Highest PTX ISA a driver accepts (driver 12040 -> 84); 0 when none. */
int cu_driver_max_isa(int driver_version);
/* Index in set of the highest arch <= cc whose ISA the driver accepts, an
 * arch-specific one only for its exact cc and then before the plain one of
 * the same number, or -1.  cu_pick_ptx asks the device. */
int cu_pick_ptx_for(const cu_ptx *set, size_t n, int cc, int driver_version);
int cu_pick_ptx(const cu_ptx *set, size_t n);
/* Refuses a text the JIT must never see: a non-ASCII byte, or a .version
 * or .target that disagrees with the declared isa/arch. */
bool cu_ptx_check(const cu_ptx *ptx, cu_error *err);

typedef struct cu_module cu_module;
typedef struct cu_kernel {
  void *function;            /* CUfunction */
  const char *name;          /* the caller's string, for messages */
} cu_kernel;

/* Picks, checks and loads one PTX of the set (JIT logs in err):
 * cu_module_compile then cu_module_install. */
bool cu_module_load(const cu_ptx *set, size_t n, cu_module **out, cu_error *err);
/* A PTX of a set compiled for the device: with the driver's linker, a
 * cubin, which takes no lock of the context while it is made (on the H200
 * sixteen threads compiled 18 kernels in 0.43-0.50 s where one load after
 * another took 2.6-3.5 s, cuModuleLoadDataEx holding the context's lock);
 * without it, the PTX, which the install compiles. */
typedef struct cu_image {
  const cu_ptx *ptx;
  void *link;              /* CUlinkState, or NULL */
  void *cubin;
  double compile_ms;
} cu_image;
bool cu_module_compile(const cu_ptx *set, size_t n, cu_image *out, cu_error *err);
/* Loads a compiled image (about 0.1 ms for a cubin) and drops it. */
bool cu_module_install(cu_image *img, cu_module **out, cu_error *err);
void cu_image_drop(cu_image *img);
bool cu_module_kernel(cu_module *m, const char *name, cu_kernel *out, cu_error *err);
int cu_module_arch(const cu_module *m);
/* "sm_90", "sm_90a" for an arch of a set. */
const char *cu_arch_name(int arch, char buf[16]);
void cu_module_unload(cu_module *m);

/* ---- launches (cu_launch.c) ------------------------------------------- */

typedef struct cu_dim3 {
  uint32_t x, y, z;
} cu_dim3;

/* A range of memory a kernel reads or writes (cu_reachable). */
typedef struct cu_range {
  const void *ptr;
  uint64_t len;
} cu_range;

/* A copy between host memory and device memory queued with a launch. */
typedef struct cu_copy {
  void *host;
  void *dev;
  uint64_t len;
} cu_copy;

/* Kernel parameters as cuLaunchKernel takes them, and every memory range
 * the pointers among them reach: all are checked before the launch.
 * Copies to the device (`in`) are queued before the launches, copies back
 * (`out`) after them, all on the launches' stream, before the one
 * synchronise; their device ends must be inside device copies
 * (cu_alloc_mirror), their host ends pinned.  Copies of at most 64 KiB
 * (TWASM_GPU_KCOPY) whose host end kernels reach are done by a copy
 * kernel on the same stream instead of the copy engine. */
typedef struct cu_args {
  void **params;
  const cu_range *ranges;
  size_t nranges;
  const cu_copy *in, *out;
  size_t nin, nout;
  /* When every parameter is 8 bytes: their number, and a single launch
   * seen before with the same kernel, shape, parameters and copies is
   * replayed as a CUDA graph (cu_graph.c); 0: never. */
  uint32_t param_words;
  /* Queue the copies and the kernel and return without waiting for them
   * (rt_defer.c waits later, with cu_sync); a failure while queueing
   * still waits for what was queued. */
  bool no_wait;
} cu_args;

/* Launches and synchronises.  On a sticky error the GPU is disabled for
 * the rest of the process (err says so) and the caller runs the CPU path. */
bool cu_launch(const cu_kernel *k, cu_dim3 grid, cu_dim3 block,
               uint32_t shared_bytes, const cu_args *args, cu_error *err);
/* Several launches in order on one stream, then one synchronise; every
 * step's pointers reach only args' ranges (and device scratch). */
typedef struct cu_step {
  const cu_kernel *kernel;
  cu_dim3 grid, block;
  uint32_t shared_bytes;
  void **params;
} cu_step;
bool cu_launch_steps(const cu_step *steps, size_t n, const cu_args *args, cu_error *err);
/* Lets k take `bytes` of dynamic shared memory (past the 48 KiB default). */
bool cu_kernel_allow_shared(const cu_kernel *k, uint32_t bytes, cu_error *err);
/* Microseconds for an empty launch plus synchronise, measured once;
 * INFINITY when the GPU cannot be used, so any comparison picks the CPU. */
double cu_launch_cost_us(void);

/* ---- profile (cu_prof.c) ---------------------------------------------- */

/* TWASM_GPU_PROFILE=1: the host time of each phase of the launch path,
 * summed, printed at exit.  Callers write
 *   double t = cu_prof_on() ? cu_prof_now() : 0; ...; if (t) cu_prof_add(PHASE, t); */
typedef enum {
  CU_PROF_DECIDE, CU_PROF_RES_COST, CU_PROF_RES_PREPARE, CU_PROF_COPY_IN, CU_PROF_KERNEL,
  CU_PROF_COPY_OUT, CU_PROF_SYNC, CU_PROF_LAUNCH, CU_PROF_GRAPH, CU_PROF_GRAPH_BUILD,
  CU_PROF_DEFER, CU_PROF_DEFER_WAIT, CU_PROF_DEFER_FAULT, CU_PROF_PHASES
} cu_prof_phase;
extern int cu_prof_state;
bool cu_prof_read(void);
static inline bool cu_prof_on(void) { return cu_prof_state < 0 ? cu_prof_read() : cu_prof_state != 0; }
double cu_prof_now(void);
void cu_prof_add(cu_prof_phase phase, double since_us);
void cu_prof_copies(uint64_t n, uint64_t bytes);

/* ---- layer-private: for cu_*.c only ----------------------------------- */

typedef int cu_result;

/* CUmemLocation. */
struct cu_mem_location {
  int type;
  int id;
};

/* The driver's entry points, as the CUDA 13.0 header maps them. */
typedef struct cu_driver {
  cu_result (*init)(unsigned flags);
  cu_result (*driver_get_version)(int *version);
  cu_result (*device_get)(int *device, int ordinal);
  cu_result (*device_get_attribute)(int *value, int attribute, int device);
  cu_result (*device_get_name)(char *name, int len, int device);
  cu_result (*primary_ctx_retain)(void **ctx, int device);
  cu_result (*primary_ctx_release)(int device);
  cu_result (*ctx_set_current)(void *ctx);
  cu_result (*ctx_synchronize)(void);
  cu_result (*mem_get_info)(size_t *free_bytes, size_t *total_bytes);
  cu_result (*mem_alloc_managed)(uint64_t *ptr, size_t size, unsigned flags);
  cu_result (*mem_free)(uint64_t ptr);
  cu_result (*module_load_data_ex)(void **module, const void *image,
                                   unsigned nopts, int *opts, void **values);
  cu_result (*module_get_function)(void **function, void *module, const char *name);
  cu_result (*module_unload)(void *module);
  cu_result (*launch_kernel)(void *function, unsigned gx, unsigned gy, unsigned gz,
                             unsigned bx, unsigned by, unsigned bz, unsigned shared,
                             void *stream, void **params, void **extra);
  cu_result (*get_error_name)(cu_result code, const char **out);
  cu_result (*get_error_string)(cu_result code, const char **out);
  /* Optional: NULL on drivers without them. */
  cu_result (*mem_prefetch_v2)(uint64_t ptr, size_t len, struct cu_mem_location loc,
                               unsigned flags, void *stream);
  cu_result (*mem_prefetch_v1)(uint64_t ptr, size_t len, int device, void *stream);
  cu_result (*mem_alloc)(uint64_t *ptr, size_t size);
  cu_result (*func_set_attribute)(void *function, int attribute, int value);
  /* Only host memory exposed on a device without pageable access. */
  cu_result (*mem_host_register)(void *ptr, size_t len, unsigned flags);
  cu_result (*mem_host_unregister)(void *ptr);
  /* Copies between pinned host memory and device memory (rt_resident.c). */
  cu_result (*memcpy_htod_async)(uint64_t dst, const void *src, size_t len, void *stream);
  cu_result (*memcpy_dtoh_async)(void *dst, uint64_t src, size_t len, void *stream);
  cu_result (*memcpy_dtod)(uint64_t dst, uint64_t src, size_t len);
  /* TWASM_GPU_SCHED only. */
  cu_result (*primary_ctx_set_flags)(int device, unsigned flags);
  /* TWASM_GPU_SYNC only. */
  cu_result (*stream_synchronize)(void *stream);
  cu_result (*stream_query)(void *stream);
  /* Launches replayed as graphs (cu_graph.c); without them, none is. */
  /* The linker (all or none): a PTX compiled to a cubin outside the
   * context's lock, so that several compile at once (cu_module.c). */
  cu_result (*link_create)(unsigned nopts, int *opts, void **values, void **state);
  cu_result (*link_add_data)(void *state, int type, void *data, size_t size, const char *name,
                             unsigned nopts, int *opts, void **values);
  cu_result (*link_complete)(void *state, void **cubin, size_t *size);
  cu_result (*link_destroy)(void *state);
  cu_result (*module_load_data)(void **module, const void *image);
  cu_result (*graph_create)(void **graph, unsigned flags);
  cu_result (*graph_add_kernel_node)(void **node, void *graph, void *const *deps, size_t ndeps,
                                     const void *params);
  cu_result (*graph_instantiate)(void **exec, void *graph, unsigned long long flags);
  cu_result (*graph_launch)(void *exec, void *stream);
  cu_result (*graph_destroy)(void *graph);
  cu_result (*graph_exec_destroy)(void *exec);
  /* TWASM_GPU_GRAPH_UPDATE only (cu_graph.c); may be missing. */
  cu_result (*graph_exec_kernel_node_set_params)(void *exec, void *node, const void *params);
} cu_driver;

/* cu_driver.c: opens soname and fills d; false with a reason otherwise. */
bool cu_driver_open(const char *soname, cu_driver *d, char *reason, size_t reason_len);
/* Whether soname can be opened (it stays open: the library is then
 * loaded once, whoever opens it next). */
bool cu_driver_loadable(const char *soname);
/* "name: CUDA_ERROR_X (description)" into err; returns false for chaining. */
bool cu_fail(cu_error *err, const char *what, cu_result code);
bool cu_fail_msg(cu_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether code leaves the context unusable. */
bool cu_is_sticky(cu_result code);

/* cu_device.c */
extern cu_driver cu_drv;     /* valid once cu_available() was true */
extern int cu_dev;           /* CUdevice */
/* Disables the GPU for the rest of the process, err (a sticky failure)
 * being the cause; err's message then says so. */
void cu_disable(cu_error *err);
/* Fills err for a failed call (err may be NULL); a sticky code disables
 * the GPU.  Returns false for chaining. */
bool cu_check_failure(cu_error *err, const char *what, cu_result code);

/* cu_launch.c, for cu_graph.c: waits for everything queued (faults
 * inside a kernel surface here; name is the kernel's, for the message);
 * a copy cu_queue_copies would do by kernel as that kernel's step and
 * its three parameters (false: it goes to the copy engine); one launch
 * queued on the null stream. */
bool cu_sync(const char *name, cu_error *err);
bool cu_kcopy_plan(const cu_copy *c, bool to_device, cu_step *step, uint64_t words[3]);
/* cu_graph.c: 1 when the single launch step (args->param_words set) ran
 * and was synchronised as a graph, -1 when it failed (err), 0 when the
 * caller launches it as usual (first sight, graphs off or refused). */
int cu_graph_launch(const cu_step *step, const cu_args *args, cu_error *err);

/* Test hook (TWASM_TEST_GPU_FAULT=1 in rt_offload.c): launches a kernel
 * that faults, so that a compiled program meets a sticky error at its
 * first launch; false with the driver's error (the GPU is then disabled). */
bool cu_test_fault(cu_error *err);

/* Test hook: the library name the next initialisation opens (a missing
 * name forces the unavailable state).  Call before any other cu_ call. */
void cu_test_use_library(const char *soname);

#endif
