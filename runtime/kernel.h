/* The kernel ABI: how every compiled kernel is called, and the helpers it may call back.
 * jit/ produces code that follows it; the executor (and tests, benches) call through it.
 *
 * Signature: void sym(void *buf0, ..., void *bufN-1, int64_t s0, ...)
 * one pointer per buffer parameter in parameter order, then one int64 per scalar
 * parameter in parameter order. Pointers are `noalias`: outputs never alias inputs
 * (call_tir is destination-passing). Buffers are dense row-major; the kernel needs no
 * alignment beyond the element size. Kernels are reentrant and thread-safe.
 *
 * Helpers (resolved by name when the kernel is linked):
 *   TJ_KERNEL_HELPER_ALLOC         void *f(int64_t nbytes): heap storage for a large or
 *                                  symbolic ALLOCATE; on NULL the kernel skips its body
 *   TJ_KERNEL_HELPER_FREE          void f(void *p)
 *   TJ_KERNEL_HELPER_PARALLEL_FOR  void f(int64_t n, void (*body)(begin, end, closure),
 *                                  void *closure): a parallel loop on the calling
 *                                  thread's current pool (runtime/thread_pool.h), inline
 *                                  when there is none
 * A failed helper allocation is counted on the thread that runs the kernel (chunks of a
 * parallel loop count on the thread that started the loop); whoever called the kernel
 * takes the count with tj_kernel_take_alloc_failures and reports it as a status. */
#ifndef TJ_RUNTIME_KERNEL_H
#define TJ_RUNTIME_KERNEL_H

#include <ffi.h>
#include <stdint.h>

#include "support/status.h"

#define TJ_KERNEL_HELPER_ALLOC "tvmjit_kernel_alloc"
#define TJ_KERNEL_HELPER_FREE "tvmjit_kernel_free"
#define TJ_KERNEL_HELPER_PARALLEL_FOR "tvmjit_parallel_for"

/* One kernel, with its libffi call prepared once and reused by every call. */
typedef struct tj_kernel {
  const char *name; /* owned */
  void (*fn)(void); /* not owned (the JIT owns the code) */
  int n_buffers;    /* pointer parameters */
  int n_scalars;    /* trailing int64 parameters */
  ffi_cif cif;
  ffi_type **arg_types;
} tj_kernel_t;

enum { TJ_KERNEL_MAX_ARGS = 4096 };

/* Fills *k for `fn` (name copied) and prepares its cif; on failure *k needs no release. */
tj_status_t *tj_kernel_init(tj_kernel_t *k, const char *name, void (*fn)(void), int n_buffers, int n_scalars);
/* Frees what tj_kernel_init allocated (not the code). */
void tj_kernel_release(tj_kernel_t *k);
/* Calls the kernel: buffers[n_buffers], scalars[n_scalars]. `argv` is the caller's
 * scratch with room for n_buffers + n_scalars pointers (so that a call allocates
 * nothing). Failed helper allocations are counted, not reported: see above. */
void tj_kernel_call(const tj_kernel_t *k, void *const *buffers, const int64_t *scalars, void **argv);

/* Helper allocations that failed on this thread since the last call; resets the count. */
int tj_kernel_take_alloc_failures(void);

/* The helpers, for the JIT to link kernels against. */
void *tj_kernel_helper_alloc(int64_t nbytes);
void tj_kernel_helper_free(void *p);
void tj_kernel_helper_parallel_for(int64_t n, void (*body)(int64_t, int64_t, void *), void *closure);

#endif
