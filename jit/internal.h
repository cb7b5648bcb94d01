/* jit/-internal declarations that need LLVM-C types (kept out of jit.h so users of
 * the JIT do not see LLVM headers). */
#ifndef TJ_JIT_INTERNAL_H
#define TJ_JIT_INTERNAL_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "jit/jit.h"

/* target.c: initialises the native target once per process (thread-safe). */
tj_status_t *tj_jit_target_init(void);
/* A new target machine for the host CPU name and full feature string; the caller
 * disposes it. One per compiling thread: a target machine is not thread-safe. */
tj_status_t *tj_jit_target_machine(int opt_level, LLVMTargetMachineRef *out_tm);

/* The target machine options other than opt level, CPU and features, as text for the
 * object cache key ("reloc=pic code-model=small"). */
const char *tj_jit_codegen_options(void);

/* codegen.c: builds `symbol` for a lowered kernel into `mod` (which has the host
 * data layout and triple). Does not verify. */
tj_status_t *tj_codegen_kernel(LLVMModuleRef mod, const tj_prim_func_t *lowered, const char *symbol,
                               int *out_n_buffers, int *out_n_scalars);

/* emit.c: tj_jit_emit_object with a caller-provided target machine (NULL = make one)
 * and per-phase times added into `acc` (may be NULL). */
tj_status_t *tj_jit_emit_object_with(const tj_prim_func_t *lowered, const char *symbol, int opt_level,
                                     LLVMTargetMachineRef tm, tj_jit_object_t *out_obj, tj_jit_stats_t *acc);
/* emit_parallel.c: kernels compiled together after a module's walk (compile.c). */
typedef struct tj_jit_job {
  const tj_prim_func_t *lowered; /* in: the lowered kernel */
  const char *symbol;            /* in */
  tj_jit_object_t obj;           /* out, when status is NULL */
  tj_status_t *status;           /* out */
  tj_jit_stats_t acc;            /* out: codegen, optimize and emit times */
  int order;                     /* the caller's, e.g. its queue position */
  size_t cost;                   /* the caller's estimate, e.g. to sort longest first */
} tj_jit_job_t;
enum { TJ_JIT_MAX_COMPILE_THREADS = 16 };
/* Threads for n_jobs kernels: the online CPUs (TVMJIT_COMPILE_THREADS overrides), at
 * most one per job. */
int tj_jit_compile_threads(int n_jobs);
/* Emits every job's object, on tj_jit_compile_threads(n) threads: the caller's with
 * caller_tm, the others with target machines of their own. */
void tj_jit_emit_parallel(tj_jit_job_t *jobs, int n, int opt_level, LLVMTargetMachineRef caller_tm);

/* kernel_meta.c: the packed weights' descriptions stored with a cached object (a hit
 * does not lower the kernel, which is what made them). Encode: tj_malloc'd bytes.
 * Decode checks them against the un-lowered PrimFunc and the object's ABI; false (and
 * `why`) when they do not fit, so the entry is not used. */
tj_status_t *tj_jit_meta_encode(const tj_tir_prepacks_t *prepacks, void **out_meta, size_t *out_size);
bool tj_jit_meta_decode(const void *meta, size_t size, const tj_prim_func_t *f, int n_buffers, int n_scalars,
                        tj_tir_prepacks_t *out, char *why, size_t why_len);

/* Monotonic clock in milliseconds. */
double tj_jit_now_ms(void);

/* cache.c: a warning or debug line to `m` (may be NULL: dropped; debug lines only when
 * m->debug). The library never prints. */
void tj_jit_say(const tj_jit_messages_t *m, tj_jit_msg_kind_t kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* engine.c / compile.c: the JIT object. */
#include <pthread.h>
#include <llvm-c/LLJIT.h>

/* A kernel in the table, found by its cache key (the un-lowered PrimFunc and every
 * option: cache_key.c) or, after lowering, by its lowered text. An entry loaded from
 * the disk cache has no text; a kernel whose text matched an entry of another key gets
 * an entry of its own for its key, sharing the code. */
typedef struct tj_jit_entry {
  uint8_t key[16];
  uint64_t text_hash;
  char *text;   /* canonical text of the lowered kernel; NULL when it was not lowered */
  char *symbol;
  void (*fn)(void);
  int n_buffers, n_scalars;
  tj_tir_prepacks_t prepacks; /* the weights it reads packed */
} tj_jit_entry_t;

struct tj_jit {
  LLVMOrcLLJITRef lljit;
  pthread_mutex_t lock;        /* guards everything below and adds to the JIT */
  char session_error[1024];    /* last error the execution session reported */
  tj_jit_entry_t *entries;
  int n_entries, cap_entries;
  tj_jit_stats_t stats;
  tj_jit_object_cache_t cache; /* load == NULL: none */
};

/* engine.c: adds an object and looks its kernel up; caller holds jit->lock. */
tj_status_t *tj_jit_add_object_locked(tj_jit_t *jit, const tj_jit_object_t *obj, void (**out_fn)(void));

#endif
