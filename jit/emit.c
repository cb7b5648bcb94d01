/* Lowered kernel -> verified LLVM module -> optimised (default<Ox>, host target
 * machine) -> object file bytes. Every step runs in its own LLVMContext with the
 * caller's target machine, so threads can emit concurrently (docs/llvm.md §6). The
 * object bytes plus the kernel's canonical text are what a disk cache would store. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "jit/internal.h"
#include "support/alloc.h"

double tj_jit_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void tj_jit_object_free(tj_jit_object_t *obj) {
  if (!obj) return;
  tj_free(obj->symbol);
  tj_free(obj->canonical_text);
  tj_free(obj->bytes);
  tj_free(obj->meta);
  memset(obj, 0, sizeof *obj);
}

static tj_status_t *llvm_error(LLVMErrorRef err, const char *what, const char *symbol) {
  char *msg = LLVMGetErrorMessage(err);
  tj_status_t *s = tj_status_new(TJ_ERR_COMPILE, "%s '%s': %s", what, symbol, msg ? msg : "?");
  LLVMDisposeErrorMessage(msg);
  return s;
}

/* The module for one kernel, verified. */
static tj_status_t *build_module(LLVMContextRef ctx, LLVMTargetMachineRef tm, const tj_prim_func_t *f,
                                 const char *symbol, LLVMModuleRef *out_mod, int *nb, int *ns) {
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext(symbol, ctx);
  char *triple = LLVMGetTargetMachineTriple(tm);
  LLVMSetTarget(mod, triple);
  LLVMDisposeMessage(triple);
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(mod, td);
  LLVMDisposeTargetData(td);
  tj_status_t *s = tj_codegen_kernel(mod, f, symbol, nb, ns);
  if (!s) {
    char *msg = NULL;
    if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg))
      s = tj_status_new(TJ_ERR_COMPILE, "LLVM rejected the IR of kernel '%s' (a tvmjit codegen bug): %s", symbol,
                        msg ? msg : "?");
    LLVMDisposeMessage(msg);
  }
  if (s) {
    LLVMDisposeModule(mod);
    return s;
  }
  *out_mod = mod;
  return NULL;
}

static tj_status_t *optimize(LLVMModuleRef mod, LLVMTargetMachineRef tm, int opt_level, const char *symbol) {
  char pipeline[32];
  snprintf(pipeline, sizeof pipeline, "default<O%d>", opt_level < 0 ? 0 : opt_level > 3 ? 3 : opt_level);
  LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
  bool on = opt_level >= 2;
  LLVMPassBuilderOptionsSetLoopVectorization(opts, on);
  LLVMPassBuilderOptionsSetSLPVectorization(opts, on);
  LLVMPassBuilderOptionsSetLoopUnrolling(opts, on);
  LLVMPassBuilderOptionsSetLoopInterleaving(opts, on);
  LLVMErrorRef err = LLVMRunPasses(mod, pipeline, tm, opts);
  LLVMDisposePassBuilderOptions(opts);
  return err ? llvm_error(err, "optimizing kernel", symbol) : NULL;
}

static tj_status_t *emit(LLVMModuleRef mod, LLVMTargetMachineRef tm, const char *symbol, void **out_bytes,
                         size_t *out_size) {
  char *msg = NULL;
  LLVMMemoryBufferRef buf = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMObjectFile, &msg, &buf)) {
    tj_status_t *s = tj_status_new(TJ_ERR_COMPILE, "emitting the object of kernel '%s': %s", symbol, msg ? msg : "?");
    LLVMDisposeMessage(msg);
    return s;
  }
  size_t n = LLVMGetBufferSize(buf);
  void *bytes = tj_malloc(n ? n : 1);
  if (bytes) memcpy(bytes, LLVMGetBufferStart(buf), n);
  LLVMDisposeMemoryBuffer(buf);
  if (!bytes) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "emitting kernel '%s': out of memory", symbol);
  *out_bytes = bytes;
  *out_size = n;
  return NULL;
}

tj_status_t *tj_jit_emit_object_with(const tj_prim_func_t *f, const char *symbol, int opt_level,
                                     LLVMTargetMachineRef tm, tj_jit_object_t *out_obj, tj_jit_stats_t *acc) {
  LLVMTargetMachineRef own_tm = NULL;
  if (!tm) {
    TJ_RETURN_IF_ERROR(tj_jit_target_machine(opt_level, &own_tm));
    tm = own_tm;
  }
  tj_jit_object_t obj = {0};
  obj.symbol = tj_strdup(symbol);
  obj.canonical_text = tj_jit_kernel_text(f);
  tj_status_t *s = (!obj.symbol || !obj.canonical_text)
                       ? tj_status_new(TJ_ERR_OUT_OF_MEMORY, "kernel '%s': out of memory", symbol)
                       : NULL;
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = NULL;
  double t0 = tj_jit_now_ms();
  if (!s) s = build_module(ctx, tm, f, symbol, &mod, &obj.n_buffers, &obj.n_scalars);
  double t1 = tj_jit_now_ms();
  if (!s) s = optimize(mod, tm, opt_level, symbol);
  double t2 = tj_jit_now_ms();
  if (!s) s = emit(mod, tm, symbol, &obj.bytes, &obj.size);
  double t3 = tj_jit_now_ms();
  if (mod) LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  if (own_tm) LLVMDisposeTargetMachine(own_tm);
  if (s) {
    tj_jit_object_free(&obj);
    return s;
  }
  if (acc) {
    acc->codegen_ms += t1 - t0;
    acc->optimize_ms += t2 - t1;
    acc->emit_ms += t3 - t2;
  }
  *out_obj = obj;
  return NULL;
}

tj_status_t *tj_jit_emit_object(const tj_prim_func_t *lowered, const char *symbol, int opt_level,
                                tj_jit_object_t *out_obj) {
  return tj_jit_emit_object_with(lowered, symbol, opt_level, NULL, out_obj, NULL);
}

tj_status_t *tj_jit_llvm_ir(const tj_prim_func_t *lowered, const char *symbol, int opt_level, char **out_ir) {
  LLVMTargetMachineRef tm;
  TJ_RETURN_IF_ERROR(tj_jit_target_machine(opt_level, &tm));
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = NULL;
  int nb, ns;
  tj_status_t *s = build_module(ctx, tm, lowered, symbol, &mod, &nb, &ns);
  if (!s && opt_level > 0) s = optimize(mod, tm, opt_level, symbol);
  if (!s) {
    char *text = LLVMPrintModuleToString(mod);
    char *copy = tj_strdup(text);
    LLVMDisposeMessage(text);
    if (copy) *out_ir = copy;
    else s = tj_status_new(TJ_ERR_OUT_OF_MEMORY, "kernel '%s': out of memory", symbol);
  }
  if (mod) LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  LLVMDisposeTargetMachine(tm);
  return s;
}
