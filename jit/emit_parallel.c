/* Cold compilation of independent kernels on several threads. Each thread builds,
 * optimises and emits with its own LLVM context (emit.c makes one per kernel) and its
 * own target machine; only object bytes leave a thread, and they are added to the
 * shared LLJIT afterwards by the caller (docs/llvm.md §6: the pattern that is safe
 * from C; LLJIT compiling IR from several threads is not).
 *
 * The calling thread works too, with its own target machine, so one thread costs no
 * thread creation; a worker whose thread or target machine cannot be made simply does
 * not help. */
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "jit/internal.h"

typedef struct emit_work {
  tj_jit_job_t *jobs;
  int n;
  int opt_level;
  atomic_int next;
} emit_work_t;

static void run_jobs(emit_work_t *w, LLVMTargetMachineRef tm) {
  for (int i; (i = atomic_fetch_add(&w->next, 1)) < w->n;) {
    tj_jit_job_t *j = &w->jobs[i];
    j->status = tj_jit_emit_object_with(j->lowered, j->symbol, w->opt_level, tm, &j->obj, &j->acc);
  }
}

static void *worker(void *arg) {
  emit_work_t *w = arg;
  LLVMTargetMachineRef tm = NULL;
  tj_status_t *s = tj_jit_target_machine(w->opt_level, &tm);
  if (s) {
    tj_status_free(s); /* the other threads do the work */
    return NULL;
  }
  run_jobs(w, tm);
  LLVMDisposeTargetMachine(tm);
  return NULL;
}

int tj_jit_compile_threads(int n_jobs) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  const char *env = getenv("TVMJIT_COMPILE_THREADS");
  if (env && atoi(env) > 0) n = atoi(env);
  if (n < 1) n = 1;
  if (n > TJ_JIT_MAX_COMPILE_THREADS) n = TJ_JIT_MAX_COMPILE_THREADS;
  return n_jobs < n ? (n_jobs > 0 ? n_jobs : 1) : (int)n;
}

void tj_jit_emit_parallel(tj_jit_job_t *jobs, int n, int opt_level, LLVMTargetMachineRef caller_tm) {
  emit_work_t w = {jobs, n, opt_level, 0};
  pthread_t threads[TJ_JIT_MAX_COMPILE_THREADS];
  int n_threads = tj_jit_compile_threads(n), started = 0;
  for (int t = 1; t < n_threads; t++)
    if (pthread_create(&threads[started], NULL, worker, &w) == 0) started++;
  run_jobs(&w, caller_tm);
  for (int t = 0; t < started; t++) pthread_join(threads[t], NULL);
}
