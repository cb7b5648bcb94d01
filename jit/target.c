/* The host target: LLVM native target initialisation (once per process), the host
 * triple, CPU name and full feature string, and target machines built from them.
 * Never a CPU name alone: that could enable features the host lacks (SIGILL), and
 * without the feature string half falls back to slow libcalls (docs/llvm.md §2). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <llvm-c/Target.h>

#include "jit/internal.h"

static pthread_once_t target_once = PTHREAD_ONCE_INIT;
static bool target_ok;
static char target_error[256];
/* Process-lifetime strings from LLVM (never freed: part of the process's identity). */
static char *host_triple, *host_cpu, *host_features;
static LLVMTargetRef host_target;

static void target_init_once(void) {
  if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter()) {
    snprintf(target_error, sizeof target_error, "LLVM has no native target for this host");
    return;
  }
  host_triple = LLVMGetDefaultTargetTriple();
  host_cpu = LLVMGetHostCPUName();
  host_features = LLVMGetHostCPUFeatures();
  char *err = NULL;
  if (LLVMGetTargetFromTriple(host_triple, &host_target, &err)) {
    snprintf(target_error, sizeof target_error, "no LLVM target for triple '%s': %s", host_triple, err ? err : "?");
    LLVMDisposeMessage(err);
    return;
  }
  target_ok = true;
}

tj_status_t *tj_jit_target_init(void) {
  pthread_once(&target_once, target_init_once);
  return target_ok ? NULL : tj_status_new(TJ_ERR_COMPILE, "JIT target: %s", target_error);
}

const char *tj_jit_host_triple(void) { return tj_jit_target_init() ? "" : host_triple; }
const char *tj_jit_host_cpu(void) { return tj_jit_target_init() ? "" : host_cpu; }
const char *tj_jit_host_features(void) { return tj_jit_target_init() ? "" : host_features; }

static bool has_feature(const char *features, const char *name) {
  size_t n = strlen(name);
  for (const char *p = features; (p = strstr(p, name)); p += n)
    if ((p == features || p[-1] == ',') && (p[n] == ',' || p[n] == 0)) return true;
  return false;
}

int tj_jit_host_vector_bits(void) {
  const char *f = tj_jit_host_features();
  if (has_feature(f, "+avx512f")) return 512;
  if (has_feature(f, "+avx2") || has_feature(f, "+avx")) return 256;
  return 128;
}

bool tj_jit_host_native_f16(void) { return has_feature(tj_jit_host_features(), "+avx512fp16"); }

/* TVMJIT_BF16_DOT=0 turns the bfloat16 dot products off (an A/B of the same binary). */
bool tj_jit_host_bf16(void) {
  const char *v = getenv("TVMJIT_BF16_DOT");
  return !(v && v[0] == '0') && has_feature(tj_jit_host_features(), "+avx512bf16");
}

/* AMD's "performance optimization identifiers" (CPUID Fn8000_001A_EAX): bit 2 FP256, the
 * FP/SIMD datapath is 256 bits wide; bit 3 FP512, it is 512 bits wide. Intel CPUs have no
 * such leaf (__get_cpuid fails past their highest extended leaf): full width assumed,
 * which their AVX-512 server cores have. */
static int cpuid_datapath_bits(void) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  if (tj_jit_host_vector_bits() < 512 || !__get_cpuid(0x8000001a, &a, &b, &c, &d)) return 0;
  return (a & 4) && !(a & 8) ? 256 : 0;
#else
  return 0;
#endif
}

int tj_jit_host_datapath_bits(void) {
  const char *v = getenv("TVMJIT_DATAPATH_BITS");
  if (v && (!strcmp(v, "256") || !strcmp(v, "512"))) return atoi(v) == 256 ? 256 : 0;
  return cpuid_datapath_bits();
}

/* The Winograd rule for 3x3 convs (schedule_winograd.c), default float mode only: on
 * unless TVMJIT_WINOGRAD=0. ResNet-18 at 1 and 2 threads on the Ice Lake host was faster
 * with it (docs/cpu-schedule.md). */
static bool winograd_requested(void) {
  const char *v = getenv("TVMJIT_WINOGRAD");
  return !(v && v[0] == '0');
}

tj_tir_schedule_options_t tj_jit_schedule_options(bool enabled, bool relaxed_float) {
  return (tj_tir_schedule_options_t){.enabled = enabled,
                                     .vector_bits = tj_jit_host_vector_bits(),
                                     .datapath_bits = tj_jit_host_datapath_bits(),
                                     .native_f16 = tj_jit_host_native_f16(),
                                     .bf16_dot = relaxed_float && tj_jit_host_bf16(),
                                     .fp_contract = relaxed_float,
                                     .reorder_reductions = relaxed_float,
                                     .winograd = relaxed_float && winograd_requested()};
}

static LLVMCodeGenOptLevel codegen_level(int opt_level) {
  if (opt_level <= 0) return LLVMCodeGenLevelNone;
  if (opt_level == 1) return LLVMCodeGenLevelLess;
  if (opt_level == 2) return LLVMCodeGenLevelDefault;
  return LLVMCodeGenLevelAggressive;
}

/* Small code model + PIC: calls to helpers go through JITLink's PLT stubs. These two
 * and the text below change together: the text is part of the object cache key. */
#define TJ_RELOC_MODEL LLVMRelocPIC
#define TJ_CODE_MODEL LLVMCodeModelSmall
const char *tj_jit_codegen_options(void) { return "reloc=pic code-model=small"; }

tj_status_t *tj_jit_target_machine(int opt_level, LLVMTargetMachineRef *out_tm) {
  TJ_RETURN_IF_ERROR(tj_jit_target_init());
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(host_target, host_triple, host_cpu, host_features,
                                                    codegen_level(opt_level), TJ_RELOC_MODEL, TJ_CODE_MODEL);
  if (!tm) return tj_status_new(TJ_ERR_COMPILE, "cannot create an LLVM target machine for %s (%s)", host_triple, host_cpu);
  *out_tm = tm;
  return NULL;
}
