/* The kernel ABI (kernel.h): the libffi call of one kernel and the helpers kernels call. */
#include "runtime/kernel.h"

#include <stdatomic.h>
#include <string.h>

#include "runtime/thread_pool.h"
#include "support/alloc.h"

tj_status_t *tj_kernel_init(tj_kernel_t *k, const char *name, void (*fn)(void), int n_buffers, int n_scalars) {
  memset(k, 0, sizeof *k);
  if (!fn) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "kernel '%s' has no code", name ? name : "?");
  if (n_buffers < 0 || n_scalars < 0 || n_buffers + n_scalars > TJ_KERNEL_MAX_ARGS)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "kernel '%s': bad parameter counts (%d buffers, %d scalars)",
                         name ? name : "?", n_buffers, n_scalars);
  int n_args = n_buffers + n_scalars;
  k->name = tj_strdup(name ? name : "kernel");
  k->arg_types = tj_calloc((size_t)n_args + 1, sizeof *k->arg_types);
  if (!k->name || !k->arg_types) {
    tj_kernel_release(k);
    return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory preparing kernel '%s'", name ? name : "?");
  }
  k->fn = fn;
  k->n_buffers = n_buffers;
  k->n_scalars = n_scalars;
  for (int i = 0; i < n_args; i++) k->arg_types[i] = i < n_buffers ? &ffi_type_pointer : &ffi_type_sint64;
  ffi_status fs = ffi_prep_cif(&k->cif, FFI_DEFAULT_ABI, (unsigned)n_args, &ffi_type_void, k->arg_types);
  if (fs != FFI_OK) {
    tj_status_t *s = tj_status_new(TJ_ERR_INTERNAL, "kernel '%s': libffi cannot prepare a call with %d arguments (status %d)",
                                   k->name, n_args, (int)fs);
    tj_kernel_release(k);
    return s;
  }
  return NULL;
}

void tj_kernel_release(tj_kernel_t *k) {
  tj_free((void *)k->name);
  tj_free(k->arg_types);
  k->name = NULL;
  k->arg_types = NULL;
}

void tj_kernel_call(const tj_kernel_t *k, void *const *buffers, const int64_t *scalars, void **argv) {
  /* libffi wants the address of each argument value. */
  for (int a = 0; a < k->n_buffers; a++) argv[a] = (void *)&buffers[a];
  for (int s = 0; s < k->n_scalars; s++) argv[k->n_buffers + s] = (void *)&scalars[s];
  ffi_call((ffi_cif *)&k->cif, k->fn, NULL, argv);
}

/* ---- helpers ---- */

static _Thread_local int alloc_failures;

void *tj_kernel_helper_alloc(int64_t nbytes) {
  void *p = nbytes >= 0 ? tj_aligned_alloc(nbytes > 0 ? (size_t)nbytes : 1) : NULL;
  if (!p) alloc_failures++;
  return p;
}

void tj_kernel_helper_free(void *p) { tj_aligned_free(p); }

int tj_kernel_take_alloc_failures(void) {
  int n = alloc_failures;
  alloc_failures = 0;
  return n;
}

typedef struct parallel_job {
  void (*body)(int64_t, int64_t, void *);
  void *closure;
  atomic_int alloc_failures; /* counted on the threads that ran chunks */
} parallel_job_t;

static void parallel_chunk(int64_t begin, int64_t end, void *ctx) {
  parallel_job_t *job = ctx;
  job->body(begin, end, job->closure);
  int failed = tj_kernel_take_alloc_failures();
  if (failed) atomic_fetch_add_explicit(&job->alloc_failures, failed, memory_order_relaxed);
}

void tj_kernel_helper_parallel_for(int64_t n, void (*body)(int64_t, int64_t, void *), void *closure) {
  parallel_job_t job = {body, closure, 0};
  int before = tj_kernel_take_alloc_failures(); /* chunks run here take this thread's count */
  tj_thread_pool_parallel_for(tj_thread_pool_current(), n, parallel_chunk, &job);
  alloc_failures = before + atomic_load_explicit(&job.alloc_failures, memory_order_relaxed);
}
