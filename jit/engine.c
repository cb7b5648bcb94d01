/* The ORC LLJIT engine: one LLJIT per tj_jit_t, fed with object files (never IR, so
 * several threads can compile at once: docs/llvm.md §6). Kernel helpers are absolute
 * symbols (the runtime's, runtime/kernel.h); libm and libgcc (half conversions when
 * needed) come from the process.
 * Errors the execution session reports are captured, never printed. */
#include <stdio.h>
#include <string.h>

#include <llvm-c/Error.h>
#include <llvm-c/Orc.h>

#include "jit/internal.h"
#include "runtime/kernel.h"
#include "support/alloc.h"

/* ---- engine ---- */

static tj_status_t *consume_error(LLVMErrorRef err, const char *what) {
  char *msg = LLVMGetErrorMessage(err);
  tj_status_t *s = tj_status_new(TJ_ERR_COMPILE, "%s: %s", what, msg ? msg : "?");
  LLVMDisposeErrorMessage(msg);
  return s;
}

static void report_session_error(void *ctx, LLVMErrorRef err) {
  tj_jit_t *jit = ctx;
  char *msg = LLVMGetErrorMessage(err);
  /* Called with the JIT's lock held (from add/lookup), or from a JIT thread. */
  snprintf(jit->session_error, sizeof jit->session_error, "%s", msg ? msg : "?");
  LLVMDisposeErrorMessage(msg);
}

static tj_status_t *define_helpers(tj_jit_t *jit) {
  LLVMJITSymbolFlags flags = {LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable, 0};
  LLVMOrcCSymbolMapPair pairs[3] = {
      {LLVMOrcLLJITMangleAndIntern(jit->lljit, TJ_KERNEL_HELPER_ALLOC),
       {(LLVMOrcExecutorAddress)(uintptr_t)&tj_kernel_helper_alloc, flags}},
      {LLVMOrcLLJITMangleAndIntern(jit->lljit, TJ_KERNEL_HELPER_FREE),
       {(LLVMOrcExecutorAddress)(uintptr_t)&tj_kernel_helper_free, flags}},
      {LLVMOrcLLJITMangleAndIntern(jit->lljit, TJ_KERNEL_HELPER_PARALLEL_FOR),
       {(LLVMOrcExecutorAddress)(uintptr_t)&tj_kernel_helper_parallel_for, flags}},
  };
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(jit->lljit);
  LLVMErrorRef err = LLVMOrcJITDylibDefine(jd, LLVMOrcAbsoluteSymbols(pairs, 3));
  if (err) return consume_error(err, "JIT: defining kernel helpers");
  LLVMOrcDefinitionGeneratorRef gen = NULL;
  err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(jit->lljit), NULL, NULL);
  if (err) return consume_error(err, "JIT: process symbol search");
  LLVMOrcJITDylibAddGenerator(jd, gen);
  return NULL;
}

tj_status_t *tj_jit_create(tj_jit_t **out_jit) {
  TJ_RETURN_IF_ERROR(tj_jit_target_init());
  tj_jit_t *jit = tj_calloc(1, sizeof *jit);
  if (!jit) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "JIT: out of memory");
  pthread_mutex_init(&jit->lock, NULL);
  LLVMTargetMachineRef tm;
  tj_status_t *s = tj_jit_target_machine(3, &tm);
  if (s) {
    tj_jit_free(jit);
    return s;
  }
  /* The builder takes the target machine; LLVMOrcCreateLLJIT takes the builder. */
  LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
  LLVMErrorRef err = LLVMOrcCreateLLJIT(&jit->lljit, builder);
  if (err) {
    jit->lljit = NULL;
    tj_jit_free(jit);
    return consume_error(err, "JIT: creating ORC LLJIT");
  }
  LLVMOrcExecutionSessionSetErrorReporter(LLVMOrcLLJITGetExecutionSession(jit->lljit), report_session_error, jit);
  s = define_helpers(jit);
  if (s) {
    tj_jit_free(jit);
    return s;
  }
  *out_jit = jit;
  return NULL;
}

void tj_jit_free(tj_jit_t *jit) {
  if (!jit) return;
  if (jit->lljit) {
    LLVMErrorRef err = LLVMOrcDisposeLLJIT(jit->lljit);
    if (err) LLVMConsumeError(err);
  }
  for (int i = 0; i < jit->n_entries; i++) {
    tj_free(jit->entries[i].text);
    tj_free(jit->entries[i].symbol);
  }
  tj_free(jit->entries);
  pthread_mutex_destroy(&jit->lock);
  tj_free(jit);
}

void tj_jit_get_stats(const tj_jit_t *jit, tj_jit_stats_t *out_stats) {
  pthread_mutex_lock((pthread_mutex_t *)&jit->lock);
  *out_stats = jit->stats;
  pthread_mutex_unlock((pthread_mutex_t *)&jit->lock);
}

tj_status_t *tj_jit_add_object_locked(tj_jit_t *jit, const tj_jit_object_t *obj, void (**out_fn)(void)) {
  jit->session_error[0] = '\0';
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(obj->bytes, obj->size, obj->symbol);
  /* Takes ownership of buf even on error (docs/llvm.md §4). */
  LLVMErrorRef err = LLVMOrcLLJITAddObjectFile(jit->lljit, LLVMOrcLLJITGetMainJITDylib(jit->lljit), buf);
  if (err) return tj_status_annotate(consume_error(err, "adding the object to the JIT"), "kernel '%s'", obj->symbol);
  LLVMOrcExecutorAddress addr = 0;
  err = LLVMOrcLLJITLookup(jit->lljit, &addr, obj->symbol);
  if (err) {
    tj_status_t *s = consume_error(err, "linking the kernel in the JIT");
    if (jit->session_error[0]) s = tj_status_annotate(s, "JIT session: %s", jit->session_error);
    return tj_status_annotate(s, "kernel '%s'", obj->symbol);
  }
  if (!addr) return tj_status_new(TJ_ERR_COMPILE, "kernel '%s': the JIT returned a null address", obj->symbol);
  *out_fn = (void (*)(void))(uintptr_t)addr;
  return NULL;
}

tj_status_t *tj_jit_add_object(tj_jit_t *jit, const tj_jit_object_t *obj, void (**out_fn)(void)) {
  pthread_mutex_lock(&jit->lock);
  tj_status_t *s = tj_jit_add_object_locked(jit, obj, out_fn);
  pthread_mutex_unlock(&jit->lock);
  return s;
}
