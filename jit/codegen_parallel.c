/* The outermost T.parallel loop of a kernel, outlined for the thread pool:
 *
 *   kernel:  closure = {free values};  tvmjit_parallel_for(extent, body, &closure)
 *   body(i64 begin, i64 end, ptr closure):  loads the values, calls impl
 *   impl(i64 begin, i64 end, values...):    for i in [begin, end): v = min + i; <loop body>
 *
 * The free values of the loop body (buffer pointers, scalar parameters, enclosing loop
 * variables, lets) are found by a walk of the body and packed into a struct on the
 * kernel's stack; constants are not packed, the body function uses them directly.
 * impl takes them as parameters so that pointers keep `noalias` (every pointer of a
 * kernel is a distinct buffer: a noalias parameter, an alloca or a heap temporary;
 * equal values share one parameter), which lets LLVM vectorize without runtime alias
 * checks. Buffers allocated inside the loop become allocas of impl, so each thread
 * (each chunk) has its own. Parallel loops nested inside run serially.
 *
 * The runtime entry is called by name and resolved when the object is linked
 * (jit/engine.c defines it as an absolute symbol), so cached objects stay valid. */
#include <stdio.h>
#include <string.h>

#include "ir/visit.h"
#include "jit/codegen.h"
#include "runtime/kernel.h"
#include "support/alloc.h"

/* ---------------- the free variables of the loop body ---------------- */

typedef struct var_set {
  const tj_tir_expr_t **items;
  int n, cap;
  bool oom;
} var_set_t;

static bool set_has(const var_set_t *s, const tj_tir_expr_t *v) {
  for (int i = 0; i < s->n; i++)
    if (s->items[i] == v) return true;
  return false;
}

static void set_add(var_set_t *s, const tj_tir_expr_t *v) {
  if (!v || set_has(s, v)) return;
  if (s->n == s->cap) {
    int cap = s->cap ? s->cap * 2 : 16;
    const tj_tir_expr_t **p = tj_realloc(s->items, sizeof(*p) * (size_t)cap);
    if (!p) {
      s->oom = true;
      return;
    }
    s->items = p;
    s->cap = cap;
  }
  s->items[s->n++] = v;
}

typedef struct free_scan {
  var_set_t used, defined;
} free_scan_t;

static bool scan_expr(tj_tir_visitor_t *v, const tj_tir_expr_t *e) {
  free_scan_t *fs = v->ctx;
  if (e->kind == TJ_TIR_VAR) set_add(&fs->used, e);
  else if (e->kind == TJ_TIR_BUFFER_LOAD) set_add(&fs->used, e->load.buffer->data);
  else if (e->kind == TJ_TIR_LET) set_add(&fs->defined, e->let.var);
  return true;
}

static bool scan_stmt(tj_tir_visitor_t *v, const tj_tir_stmt_t *s) {
  free_scan_t *fs = v->ctx;
  switch (s->kind) {
    case TJ_TIR_FOR: set_add(&fs->defined, s->loop.var); break;
    case TJ_TIR_LET_STMT: set_add(&fs->defined, s->let.var); break;
    case TJ_TIR_BUFFER_STORE: set_add(&fs->used, s->store.buffer->data); break;
    case TJ_TIR_ALLOCATE:
      set_add(&fs->defined, s->allocate.buffer->data);
      /* codegen reads the (flattened) size of a heap allocation */
      if (s->allocate.buffer->ndim > 0) tj_tir_visit_expr(v, s->allocate.buffer->shape[0]);
      break;
    default: break;
  }
  return true;
}

/* Variables the loop (its body, not its own var) uses but does not define. */
static bool free_vars(const tj_tir_stmt_t *loop, var_set_t *out) {
  free_scan_t fs = {0};
  set_add(&fs.defined, loop->loop.var);
  tj_tir_visitor_t v = {.expr = scan_expr, .stmt = scan_stmt, .ctx = &fs};
  tj_tir_visit_stmt(&v, loop->loop.body);
  bool ok = !fs.used.oom && !fs.defined.oom;
  for (int i = 0; ok && i < fs.used.n; i++)
    if (!set_has(&fs.defined, fs.used.items[i])) set_add(out, fs.used.items[i]);
  tj_free(fs.used.items);
  tj_free(fs.defined.items);
  return ok && !out->oom;
}

/* ---------------- the closure ---------------- */

typedef struct capture {
  int n_vars;
  const tj_tir_expr_t **vars; /* free vars, then the loop's min (vars[n_vars] = NULL) */
  LLVMValueRef *var_values;   /* their values in the kernel */
  int *slot;                  /* closure field of each, or -1 for a constant */
  int n_slots;
  LLVMValueRef *slot_values;  /* distinct non-constant values */
  LLVMTypeRef *slot_types;
} capture_t;

static void capture_free(capture_t *cap) {
  tj_free(cap->vars);
  tj_free(cap->var_values);
  tj_free(cap->slot);
  tj_free(cap->slot_values);
  tj_free(cap->slot_types);
}

static bool fail(cg_t *c, tj_code_t code, const char *what) {
  if (!c->err) c->err = tj_status_new(code, "codegen '%s': %s", c->name, what);
  return false;
}

/* Looks every free var up in the enclosing code, plus `min`, and assigns slots. */
static bool capture_values(cg_t *c, const var_set_t *fv, LLVMValueRef min, capture_t *cap) {
  int n = fv->n + 1;
  cap->n_vars = fv->n;
  cap->vars = tj_calloc((size_t)n, sizeof *cap->vars);
  cap->var_values = tj_calloc((size_t)n, sizeof *cap->var_values);
  cap->slot = tj_calloc((size_t)n, sizeof *cap->slot);
  cap->slot_values = tj_calloc((size_t)n, sizeof *cap->slot_values);
  cap->slot_types = tj_calloc((size_t)n, sizeof *cap->slot_types);
  if (!cap->vars || !cap->var_values || !cap->slot || !cap->slot_values || !cap->slot_types)
    return fail(c, TJ_ERR_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < n; i++) {
    LLVMValueRef v = min;
    if (i < fv->n) {
      cap->vars[i] = fv->items[i];
      if (!(v = tj_cg_lookup(c, fv->items[i]))) return false;
    }
    cap->var_values[i] = v;
    cap->slot[i] = -1;
    if (LLVMIsConstant(v)) continue;
    for (int k = 0; k < cap->n_slots && cap->slot[i] < 0; k++)
      if (cap->slot_values[k] == v) cap->slot[i] = k;
    if (cap->slot[i] >= 0) continue;
    cap->slot[i] = cap->n_slots;
    cap->slot_values[cap->n_slots] = v;
    cap->slot_types[cap->n_slots++] = LLVMTypeOf(v);
  }
  return true;
}

/* ---------------- the functions ---------------- */

static void add_attr(cg_t *c, LLVMValueRef fn, unsigned index, const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(fn, index, LLVMCreateEnumAttribute(c->ctx, kind, 0));
}

static LLVMValueRef new_internal_fn(cg_t *c, const char *name, LLVMTypeRef ty) {
  LLVMValueRef fn = LLVMAddFunction(c->mod, name, ty);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  add_attr(c, fn, LLVMAttributeFunctionIndex, "nounwind");
  return fn;
}

/* impl(begin, end, slots...): the loop over [begin, end) with the body, generated with
 * the codegen state switched to impl and restored afterwards. */
static LLVMValueRef build_impl(cg_t *c, const tj_tir_stmt_t *loop, const capture_t *cap, const char *name) {
  int n_params = 2 + cap->n_slots;
  LLVMTypeRef *params = tj_calloc((size_t)n_params, sizeof *params);
  if (!params) return fail(c, TJ_ERR_OUT_OF_MEMORY, "out of memory"), NULL;
  params[0] = params[1] = c->t_i64;
  for (int k = 0; k < cap->n_slots; k++) params[2 + k] = cap->slot_types[k];
  LLVMValueRef fn = new_internal_fn(c, name, LLVMFunctionType(c->t_void, params, (unsigned)n_params, 0));
  tj_free(params);
  for (int k = 0; k < cap->n_slots; k++)
    if (LLVMGetTypeKind(cap->slot_types[k]) == LLVMPointerTypeKind) add_attr(c, fn, (unsigned)(3 + k), "noalias");

  cg_t saved = *c;
  c->fn = fn;
  c->in_parallel = true;
  c->b = LLVMCreateBuilderInContext(c->ctx);
  c->alloca_b = LLVMCreateBuilderInContext(c->ctx);
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(c->ctx, fn, "entry");
  LLVMBasicBlockRef header = LLVMAppendBasicBlockInContext(c->ctx, fn, "par.head");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(c->ctx, fn, "par.body");
  LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(c->ctx, fn, "par.end");
  LLVMPositionBuilderAtEnd(c->b, entry);
  LLVMValueRef br = LLVMBuildBr(c->b, header);
  LLVMPositionBuilderBefore(c->alloca_b, br);
  bool ok = true;
  LLVMValueRef min = NULL;
  for (int i = 0; i <= cap->n_vars && ok; i++) {
    LLVMValueRef v = cap->slot[i] < 0 ? cap->var_values[i] : LLVMGetParam(fn, (unsigned)(2 + cap->slot[i]));
    if (i < cap->n_vars) ok = tj_cg_bind(c, cap->vars[i], v);
    else min = v;
  }
  if (ok) {
    tj_dtype_t vt = loop->loop.var->dtype;
    LLVMPositionBuilderAtEnd(c->b, header);
    LLVMValueRef idx = LLVMBuildPhi(c->b, c->t_i64, "par.i");
    LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, idx, LLVMGetParam(fn, 1), ""), body, exit);
    LLVMPositionBuilderAtEnd(c->b, body);
    LLVMValueRef off = tj_cg_cast(c, TJ_I64, vt, idx);
    LLVMValueRef iv = vt.code == TJ_DT_INT ? LLVMBuildNSWAdd(c->b, min, off, loop->loop.var->var.name)
                                           : LLVMBuildAdd(c->b, min, off, loop->loop.var->var.name);
    ok = tj_cg_bind(c, loop->loop.var, iv) && tj_cg_stmt(c, loop->loop.body);
    if (ok) {
      LLVMValueRef next = LLVMBuildNSWAdd(c->b, idx, LLVMConstInt(c->t_i64, 1, 0), "");
      LLVMBasicBlockRef latch = LLVMGetInsertBlock(c->b);
      LLVMBuildBr(c->b, header);
      LLVMValueRef vals[2] = {LLVMGetParam(fn, 0), next};
      LLVMBasicBlockRef bbs[2] = {entry, latch};
      LLVMAddIncoming(idx, vals, bbs, 2);
      LLVMPositionBuilderAtEnd(c->b, exit);
      LLVMBuildRetVoid(c->b);
    }
  }
  LLVMDisposeBuilder(c->b);
  LLVMDisposeBuilder(c->alloca_b);
  /* Back to the enclosing function; bindings made inside impl are impl's values. */
  tj_status_t *err = c->err;
  var_binding_t *vars = c->vars;
  int cap_vars = c->cap_vars, n_parallel = c->n_parallel;
  *c = saved;
  c->err = err;
  c->vars = vars;
  c->cap_vars = cap_vars;
  c->n_parallel = n_parallel;
  return ok ? fn : NULL;
}

/* body(begin, end, closure): unpacks the closure and calls impl. */
static LLVMValueRef build_body(cg_t *c, LLVMValueRef impl, LLVMTypeRef closure_ty, const capture_t *cap,
                               const char *name) {
  LLVMTypeRef params[3] = {c->t_i64, c->t_i64, c->t_ptr};
  LLVMValueRef fn = new_internal_fn(c, name, LLVMFunctionType(c->t_void, params, 3, 0));
  int n_args = 2 + cap->n_slots;
  LLVMValueRef *args = tj_calloc((size_t)n_args, sizeof *args);
  if (!args) return fail(c, TJ_ERR_OUT_OF_MEMORY, "out of memory"), NULL;
  LLVMBuilderRef b = LLVMCreateBuilderInContext(c->ctx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(c->ctx, fn, "entry"));
  args[0] = LLVMGetParam(fn, 0);
  args[1] = LLVMGetParam(fn, 1);
  for (int k = 0; k < cap->n_slots; k++) {
    LLVMValueRef field = LLVMBuildStructGEP2(b, closure_ty, LLVMGetParam(fn, 2), (unsigned)k, "");
    args[2 + k] = LLVMBuildLoad2(b, cap->slot_types[k], field, "");
  }
  LLVMBuildCall2(b, LLVMGlobalGetValueType(impl), impl, args, (unsigned)n_args, "");
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  tj_free(args);
  return fn;
}

static LLVMValueRef parallel_for_fn(cg_t *c, LLVMTypeRef *out_ty) {
  LLVMTypeRef params[3] = {c->t_i64, c->t_ptr, c->t_ptr};
  *out_ty = LLVMFunctionType(c->t_void, params, 3, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(c->mod, TJ_KERNEL_HELPER_PARALLEL_FOR);
  return fn ? fn : LLVMAddFunction(c->mod, TJ_KERNEL_HELPER_PARALLEL_FOR, *out_ty);
}

bool tj_cg_parallel_for(cg_t *c, const tj_tir_stmt_t *s) {
  tj_dtype_t vt = s->loop.var->dtype;
  if (vt.lanes != 1 || (vt.code != TJ_DT_INT && vt.code != TJ_DT_UINT))
    return fail(c, TJ_ERR_UNSUPPORTED, "a parallel loop needs an integer loop variable");
  LLVMValueRef min = tj_cg_cast(c, s->loop.min->dtype, vt, tj_cg_expr(c, s->loop.min));
  LLVMValueRef extent = min ? tj_cg_cast(c, s->loop.extent->dtype, TJ_I64, tj_cg_expr(c, s->loop.extent)) : NULL;
  if (!extent) return false;
  var_set_t fv = {0};
  capture_t cap = {0};
  bool ok = free_vars(s, &fv) ? capture_values(c, &fv, min, &cap) : fail(c, TJ_ERR_OUT_OF_MEMORY, "out of memory");
  tj_free(fv.items);
  int k = c->n_parallel++;
  char impl_name[300], body_name[300];
  snprintf(impl_name, sizeof impl_name, "%s.parallel%d.impl", c->name, k);
  snprintf(body_name, sizeof body_name, "%s.parallel%d", c->name, k);
  LLVMTypeRef closure_ty = ok ? LLVMStructTypeInContext(c->ctx, cap.slot_types, (unsigned)cap.n_slots, 0) : NULL;
  LLVMValueRef impl = ok ? build_impl(c, s, &cap, impl_name) : NULL;
  LLVMValueRef body = impl ? build_body(c, impl, closure_ty, &cap, body_name) : NULL;
  if (body) {
    LLVMValueRef closure = LLVMConstNull(c->t_ptr);
    if (cap.n_slots > 0) {
      closure = LLVMBuildAlloca(c->alloca_b, closure_ty, "par.closure");
      for (int i = 0; i < cap.n_slots; i++)
        LLVMBuildStore(c->b, cap.slot_values[i], LLVMBuildStructGEP2(c->b, closure_ty, closure, (unsigned)i, ""));
    }
    LLVMTypeRef pf_ty;
    LLVMValueRef pf = parallel_for_fn(c, &pf_ty);
    LLVMValueRef args[3] = {extent, body, closure};
    LLVMBuildCall2(c->b, pf_ty, pf, args, 3, "");
  }
  capture_free(&cap);
  return body != NULL;
}
