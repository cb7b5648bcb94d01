/* The executable and its executor. Building appends kernels, values and calls to growable
 * arrays; planning places intermediates in one workspace (runtime/memory_plan.c); running
 * binds every value to memory and calls the kernels through their prepared ffi_cif.
 * While it runs, the only thing written to the executable is its spare run state (an
 * atomic slot, see tj_run_acquire), so runs may overlap in threads. */
#include "runtime/executable.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "runtime/memory_plan.h"
#include "support/alloc.h"
#include "support/strbuf.h"

typedef struct tj_owned {
  void *resource;
  void (*release)(void *);
} tj_owned_t;

struct tj_executable {
  int n_kernels, cap_kernels;
  tj_kernel_t **kernels;
  int n_values, cap_values;
  tj_value_desc_t *values;
  int n_calls, cap_calls;
  tj_call_t *calls;
  int n_owned, cap_owned;
  tj_owned_t *owned;
  /* Output position -> value id, and whether that position is a copy (set_output). */
  int n_outputs, cap_outputs;
  int *output_values;
  bool *output_is_copy;
  int cap_output_is_copy;
  int n_inputs, cap_inputs;
  int *input_values;
  bool planned;
  size_t workspace_bytes, unplanned_bytes;
  int max_call_args;       /* buffers + scalars of the widest call, for the per-run argv */
  tj_thread_pool_t *pool;  /* for parallel loops; NULL = the caller's current pool */
  /* The run state (workspace and pointer tables) of the last finished run, kept for the
   * next one so that a steady-state call allocates only its outputs: NULL while a run
   * holds it (a concurrent run then makes its own) or before the first run. */
  _Atomic(struct tj_run *) spare_run;
  atomic_long run_states_made; /* how many run states were allocated, for tests */
};

static void tj_run_discard(const tj_executable_t *exe, struct tj_run *r);

/* Grows *array (of `elem`-byte items) to hold at least `need` items. */
static bool tj_exe_grow(void **array, int *cap, int need, size_t elem) {
  if (need <= *cap) return true;
  int new_cap = *cap ? *cap * 2 : 8;
  while (new_cap < need) new_cap *= 2;
  void *p = tj_realloc(*array, elem * (size_t)new_cap);
  if (!p) return false;
  memset((char *)p + elem * (size_t)*cap, 0, elem * (size_t)(new_cap - *cap));
  *array = p;
  *cap = new_cap;
  return true;
}

#define TJ_EXE_GROW(exe, field, count, need) \
  tj_exe_grow((void **)&(exe)->field, &(exe)->cap_##count, (need), sizeof(*(exe)->field))

static tj_status_t *tj_exe_oom(const char *what) {
  return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory while adding %s to an executable", what);
}

tj_status_t *tj_executable_create(tj_executable_t **out_exe) {
  tj_executable_t *exe = tj_calloc(1, sizeof *exe);
  if (!exe) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory creating an executable");
  *out_exe = exe;
  return NULL;
}

void tj_executable_free(tj_executable_t *exe) {
  if (!exe) return;
  for (int i = 0; i < exe->n_kernels; i++) {
    tj_kernel_release(exe->kernels[i]);
    tj_free(exe->kernels[i]);
  }
  for (int i = 0; i < exe->n_values; i++) tj_free((void *)exe->values[i].name);
  for (int i = 0; i < exe->n_calls; i++) {
    tj_free((void *)exe->calls[i].args);
    tj_free((void *)exe->calls[i].scalars);
    tj_free((void *)exe->calls[i].binding);
  }
  /* Release in reverse order of registration, like a stack of owners. */
  for (int i = exe->n_owned - 1; i >= 0; i--)
    if (exe->owned[i].release) exe->owned[i].release(exe->owned[i].resource);
  tj_free(exe->kernels);
  tj_free(exe->values);
  tj_free(exe->calls);
  tj_free(exe->owned);
  tj_free(exe->output_values);
  tj_free(exe->output_is_copy);
  tj_free(exe->input_values);
  tj_run_discard(exe, atomic_exchange(&exe->spare_run, NULL));
  tj_free(exe);
}

/* ---- building ---- */

tj_status_t *tj_executable_add_kernel(tj_executable_t *exe, const char *name, void (*fn)(void), int n_buffers,
                                      int n_scalars, int *out_id) {
  if (!TJ_EXE_GROW(exe, kernels, kernels, exe->n_kernels + 1)) return tj_exe_oom("a kernel");
  tj_kernel_t *k = tj_calloc(1, sizeof *k);
  if (!k) return tj_exe_oom("a kernel");
  tj_status_t *s = tj_kernel_init(k, name, fn, n_buffers, n_scalars);
  if (s) {
    tj_free(k);
    return s;
  }
  exe->kernels[exe->n_kernels] = k;
  *out_id = exe->n_kernels++;
  return NULL;
}

/* Records value `id` at `position` of the input or output table, refusing duplicates. */
static tj_status_t *tj_exe_bind_position(tj_executable_t *exe, bool input, int position, int id, bool copy) {
  const char *what = input ? "input" : "output";
  if (position < 0 || position > 65535)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "%s position %d is out of range", what, position);
  int **table = input ? &exe->input_values : &exe->output_values;
  int *count = input ? &exe->n_inputs : &exe->n_outputs;
  int *cap = input ? &exe->cap_inputs : &exe->cap_outputs;
  int old_cap = *cap;
  if (!tj_exe_grow((void **)table, cap, position + 1, sizeof(int))) return tj_exe_oom(what);
  for (int i = old_cap; i < *cap; i++) (*table)[i] = -1;
  if (!input) {
    if (!TJ_EXE_GROW(exe, output_is_copy, output_is_copy, *cap)) return tj_exe_oom(what);
  }
  if ((*table)[position] >= 0)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "%s position %d is given twice ('%s' and '%s')", what, position,
                         exe->values[(*table)[position]].name, exe->values[id].name);
  (*table)[position] = id;
  if (!input) exe->output_is_copy[position] = copy;
  if (position + 1 > *count) *count = position + 1;
  return NULL;
}

tj_status_t *tj_executable_add_value(tj_executable_t *exe, const tj_value_desc_t *desc, int *out_id) {
  const char *name = desc->name ? desc->name : "?";
  tj_tensor_t probe = {.dtype = desc->dtype, .ndim = desc->ndim};
  if (desc->ndim < 0 || desc->ndim > TJ_MAX_NDIM)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "value '%s': rank %d is out of range (0 to %d)", name, desc->ndim,
                         TJ_MAX_NDIM);
  for (int i = 0; i < desc->ndim; i++) {
    if (desc->shape[i] < 0)
      return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "value '%s': dimension %d is negative", name, i);
    probe.shape[i] = desc->shape[i];
  }
  size_t nbytes = tj_tensor_nbytes(&probe);
  if (desc->nbytes != 0 && desc->nbytes != nbytes)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "value '%s': nbytes %zu does not match its type (%zu bytes)", name,
                         desc->nbytes, nbytes);
  if (desc->kind == TJ_VALUE_CONSTANT && !desc->const_data && nbytes > 0)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "constant '%s' has no data", name);
  if (desc->kind < TJ_VALUE_INPUT || desc->kind > TJ_VALUE_VIEW)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "value '%s': unknown kind %d", name, (int)desc->kind);
  if (desc->kind == TJ_VALUE_VIEW && (desc->index < 0 || desc->index >= exe->n_values ||
                                      exe->values[desc->index].kind == TJ_VALUE_VIEW ||
                                      desc->offset > exe->values[desc->index].nbytes ||
                                      nbytes > exe->values[desc->index].nbytes - desc->offset))
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "view '%s': bytes %zu..%zu are not inside an earlier value", name,
                         desc->offset, desc->offset + nbytes);
  if (!TJ_EXE_GROW(exe, values, values, exe->n_values + 1)) return tj_exe_oom("a value");
  char *name_copy = tj_strdup(name);
  if (!name_copy) return tj_exe_oom("a value");
  int id = exe->n_values;
  tj_value_desc_t *v = &exe->values[id];
  *v = *desc;
  v->name = name_copy;
  v->nbytes = nbytes;
  v->offset = desc->kind == TJ_VALUE_VIEW ? desc->offset : 0;
  exe->n_values++; /* visible before binding so that messages can name it */
  tj_status_t *s = NULL;
  if (desc->kind == TJ_VALUE_INPUT) s = tj_exe_bind_position(exe, true, desc->index, id, false);
  else if (desc->kind == TJ_VALUE_OUTPUT) s = tj_exe_bind_position(exe, false, desc->index, id, false);
  if (s) {
    exe->n_values--;
    tj_free(name_copy);
    return s;
  }
  exe->planned = false;
  *out_id = id;
  return NULL;
}

tj_status_t *tj_executable_set_output(tj_executable_t *exe, int position, int value) {
  if (value < 0 || value >= exe->n_values)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "output %d: value id %d does not exist", position, value);
  TJ_RETURN_IF_ERROR(tj_exe_bind_position(exe, false, position, value, true));
  exe->planned = false;
  return NULL;
}

tj_status_t *tj_executable_add_call(tj_executable_t *exe, int kernel, int n_args, const int *args,
                                    const int64_t *scalars, const char *binding) {
  const char *where = binding ? binding : "?";
  if (kernel < 0 || kernel >= exe->n_kernels)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "call '%s': kernel id %d does not exist", where, kernel);
  const tj_kernel_t *k = exe->kernels[kernel];
  if (n_args != k->n_buffers)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "call '%s': kernel '%s' takes %d buffers, the call passes %d", where,
                         k->name, k->n_buffers, n_args);
  if (k->n_scalars > 0 && !scalars)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "call '%s': kernel '%s' needs %d scalar arguments", where, k->name,
                         k->n_scalars);
  for (int i = 0; i < n_args; i++)
    if (args[i] < 0 || args[i] >= exe->n_values)
      return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "call '%s': argument %d is value id %d, which does not exist", where,
                           i, args[i]);
  if (!TJ_EXE_GROW(exe, calls, calls, exe->n_calls + 1)) return tj_exe_oom("a call");
  int *args_copy = tj_malloc(sizeof(int) * (size_t)(n_args + 1));
  int64_t *scalars_copy = tj_malloc(sizeof(int64_t) * (size_t)(k->n_scalars + 1));
  char *binding_copy = tj_strdup(where);
  if (!args_copy || !scalars_copy || !binding_copy) {
    tj_free(args_copy);
    tj_free(scalars_copy);
    tj_free(binding_copy);
    return tj_exe_oom("a call");
  }
  if (n_args) memcpy(args_copy, args, sizeof(int) * (size_t)n_args);
  if (k->n_scalars) memcpy(scalars_copy, scalars, sizeof(int64_t) * (size_t)k->n_scalars);
  exe->calls[exe->n_calls++] = (tj_call_t){kernel, n_args, args_copy, scalars_copy, binding_copy};
  exe->planned = false;
  return NULL;
}

tj_status_t *tj_executable_own(tj_executable_t *exe, void *resource, void (*release)(void *)) {
  if (!TJ_EXE_GROW(exe, owned, owned, exe->n_owned + 1)) {
    /* The executable was to free it; since it cannot, free it now so nothing leaks. */
    if (release) release(resource);
    return tj_exe_oom("an owned resource");
  }
  exe->owned[exe->n_owned++] = (tj_owned_t){resource, release};
  return NULL;
}

/* ---- planning ---- */

static tj_status_t *tj_exe_check_positions(const tj_executable_t *exe) {
  for (int i = 0; i < exe->n_inputs; i++)
    if (exe->input_values[i] < 0) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "input position %d has no value", i);
  for (int i = 0; i < exe->n_outputs; i++)
    if (exe->output_values[i] < 0) return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "output position %d has no value", i);
  return NULL;
}

tj_status_t *tj_executable_plan_memory(tj_executable_t *exe) {
  TJ_RETURN_IF_ERROR(tj_exe_check_positions(exe));
  int n = exe->n_values;
  tj_memory_block_t *blocks = tj_calloc((size_t)n + 1, sizeof *blocks);
  if (!blocks) return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory planning memory");
  for (int v = 0; v < n; v++) {
    blocks[v].size = exe->values[v].nbytes;
    blocks[v].first = -1;
    blocks[v].last = -1;
  }
  /* Liveness: from the first call that touches a value to the last. */
  int max_args = 0;
  for (int c = 0; c < exe->n_calls; c++) {
    const tj_call_t *call = &exe->calls[c];
    int width = call->n_args + exe->kernels[call->kernel]->n_scalars;
    if (width > max_args) max_args = width;
    for (int a = 0; a < call->n_args; a++) {
      const tj_value_desc_t *d = &exe->values[call->args[a]];
      tj_memory_block_t *b = &blocks[d->kind == TJ_VALUE_VIEW ? d->index : call->args[a]];
      if (b->first < 0) b->first = c;
      b->last = c;
    }
  }
  /* An intermediate returned as an output copy must survive until the copy after the last call. */
  for (int o = 0; o < exe->n_outputs; o++) {
    tj_memory_block_t *b = &blocks[exe->output_values[o]];
    if (b->first < 0) b->first = exe->n_calls;
    b->last = exe->n_calls;
  }
  /* Plan only the intermediates: compact them to the front of a second array. */
  int m = 0;
  int *ids = tj_malloc(sizeof(int) * ((size_t)n + 1));
  if (!ids) {
    tj_free(blocks);
    return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory planning memory");
  }
  size_t unplanned = 0;
  for (int v = 0; v < n; v++) {
    if (exe->values[v].kind != TJ_VALUE_INTERMEDIATE) continue;
    if (blocks[v].first < 0) blocks[v].first = blocks[v].last = 0; /* unused: still gets bytes */
    unplanned += tj_memory_plan_round(blocks[v].size);
    ids[m] = v;
    blocks[m++] = blocks[v];
  }
  size_t total = tj_memory_plan_assign(m, blocks);
  if (total == (size_t)-1) {
    tj_free(blocks);
    tj_free(ids);
    return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory planning memory");
  }
  for (int i = 0; i < m; i++) exe->values[ids[i]].offset = blocks[i].offset;
  tj_free(blocks);
  tj_free(ids);
  exe->workspace_bytes = total;
  exe->unplanned_bytes = unplanned;
  exe->max_call_args = max_args;
  exe->planned = true;
  tj_run_discard(exe, atomic_exchange(&exe->spare_run, NULL)); /* sized for the old plan */
  return NULL;
}

/* ---- inspection ---- */

int tj_executable_num_inputs(const tj_executable_t *exe) { return exe->n_inputs; }
int tj_executable_num_outputs(const tj_executable_t *exe) { return exe->n_outputs; }

const tj_value_desc_t *tj_executable_input(const tj_executable_t *exe, int i) {
  if (i < 0 || i >= exe->n_inputs || exe->input_values[i] < 0) return NULL;
  return &exe->values[exe->input_values[i]];
}

const tj_value_desc_t *tj_executable_output(const tj_executable_t *exe, int i) {
  if (i < 0 || i >= exe->n_outputs || exe->output_values[i] < 0) return NULL;
  return &exe->values[exe->output_values[i]];
}

const tj_value_desc_t *tj_executable_value(const tj_executable_t *exe, int id) {
  return id >= 0 && id < exe->n_values ? &exe->values[id] : NULL;
}

int tj_executable_num_values(const tj_executable_t *exe) { return exe->n_values; }
int tj_executable_num_calls(const tj_executable_t *exe) { return exe->n_calls; }
int tj_executable_num_kernels(const tj_executable_t *exe) { return exe->n_kernels; }
size_t tj_executable_workspace_bytes(const tj_executable_t *exe) { return exe->workspace_bytes; }
size_t tj_executable_unplanned_bytes(const tj_executable_t *exe) { return exe->unplanned_bytes; }
long tj_executable_run_states_made(const tj_executable_t *exe) { return atomic_load(&exe->run_states_made); }

/* Live range of value v as "first..last" call indices (a use of a view of v counts),
 * "-" when no call uses it. */
static void tj_exe_live_range(const tj_executable_t *exe, int v, char *buf, size_t len) {
  int first = -1, last = -1;
  for (int c = 0; c < exe->n_calls; c++)
    for (int a = 0; a < exe->calls[c].n_args; a++) {
      const tj_value_desc_t *d = &exe->values[exe->calls[c].args[a]];
      if (exe->calls[c].args[a] == v || (d->kind == TJ_VALUE_VIEW && d->index == v)) {
        if (first < 0) first = c;
        last = c;
      }
    }
  if (first < 0) snprintf(buf, len, "-");
  else snprintf(buf, len, "%d..%d", first, last);
}

char *tj_executable_memory_plan_text(const tj_executable_t *exe) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  if (!exe->planned) {
    tj_strbuf_append(&sb, "memory plan: not planned yet (call tj_executable_plan_memory)\n");
    return tj_strbuf_take(&sb);
  }
  int n_inter = 0;
  for (int v = 0; v < exe->n_values; v++) n_inter += exe->values[v].kind == TJ_VALUE_INTERMEDIATE;
  double saved = exe->unplanned_bytes ? 100.0 * (double)(exe->unplanned_bytes - exe->workspace_bytes) /
                                            (double)exe->unplanned_bytes
                                      : 0.0;
  tj_strbuf_printf(&sb, "memory plan: %d intermediate%s in a workspace of %zu bytes (unplanned %zu bytes, %.1f%% saved)\n",
                   n_inter, n_inter == 1 ? "" : "s", exe->workspace_bytes, exe->unplanned_bytes, saved);
  if (n_inter == 0) return tj_strbuf_take(&sb);
  tj_strbuf_printf(&sb, "  %-4s  %-20s  %-28s  %-9s  %10s  %10s\n", "slot", "value", "type", "calls", "offset", "bytes");
  /* Slots number the distinct offsets in ascending order: values sharing a slot share bytes. */
  for (int v = 0; v < exe->n_values; v++) {
    const tj_value_desc_t *d = &exe->values[v];
    if (d->kind != TJ_VALUE_INTERMEDIATE) continue;
    int slot = 0;
    for (int w = 0; w < exe->n_values; w++) {
      const tj_value_desc_t *e = &exe->values[w];
      if (e->kind != TJ_VALUE_INTERMEDIATE || e->offset >= d->offset) continue;
      bool first_at_offset = true;
      for (int u = 0; u < w; u++)
        if (exe->values[u].kind == TJ_VALUE_INTERMEDIATE && exe->values[u].offset == e->offset) first_at_offset = false;
      slot += first_at_offset;
    }
    char type[160], live[32];
    tj_tensor_type_str(d->dtype, d->ndim, d->shape, type, sizeof type);
    tj_exe_live_range(exe, v, live, sizeof live);
    tj_strbuf_printf(&sb, "  %-4d  %-20s  %-28s  %-9s  %10zu  %10zu\n", slot, d->name, type, live, d->offset, d->nbytes);
  }
  return tj_strbuf_take(&sb);
}

/* ---- running ---- */

static void tj_exe_names_list(const tj_executable_t *exe, tj_strbuf_t *sb) {
  for (int i = 0; i < exe->n_inputs; i++) tj_strbuf_printf(sb, "%s%s", i ? ", " : "", exe->values[exe->input_values[i]].name);
}

static tj_status_t *tj_exe_check_inputs(const tj_executable_t *exe, int n_inputs, const tj_tensor_t *const *inputs) {
  if (n_inputs != exe->n_inputs) {
    tj_strbuf_t sb;
    tj_strbuf_init(&sb);
    tj_exe_names_list(exe, &sb);
    char *names = tj_strbuf_take(&sb);
    tj_status_t *s = tj_status_new(TJ_ERR_INVALID_ARGUMENT, "expected %d input%s (%s), got %d", exe->n_inputs,
                                   exe->n_inputs == 1 ? "" : "s", names ? names : "", n_inputs);
    tj_free(names);
    return s;
  }
  for (int i = 0; i < n_inputs; i++) {
    const tj_value_desc_t *want = &exe->values[exe->input_values[i]];
    const tj_tensor_t *got = inputs ? inputs[i] : NULL;
    /* The type text is made only for a message: formatting it for every input of every
     * call was 330 ns of a 600 ns one-relu call (bench/call_overhead). */
    char want_s[160], got_s[160];
    if (!got)
      return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "input '%s': expected %s, got no tensor", want->name,
                           tj_tensor_type_str(want->dtype, want->ndim, want->shape, want_s, sizeof want_s));
    bool same = tj_dtype_eq(got->dtype, want->dtype) && got->ndim == want->ndim;
    for (int d = 0; same && d < want->ndim; d++) same = got->shape[d] == want->shape[d];
    if (!same)
      return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "input '%s': expected %s, got %s", want->name,
                           tj_tensor_type_str(want->dtype, want->ndim, want->shape, want_s, sizeof want_s),
                           tj_tensor_type_str(got->dtype, got->ndim, got->shape, got_s, sizeof got_s));
    if (!got->data && want->nbytes > 0)
      return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "input '%s': tensor has no data", want->name);
  }
  return NULL;
}

/* Per-run state: where every value lives during this run. Kept between runs (the
 * executable's spare_run): before it was, each call of a one-relu model made 5 of its
 * 9 allocations here. */
typedef struct tj_run {
  void **ptrs;            /* one per value */
  unsigned char *workspace;
  tj_tensor_t **outputs;  /* one per output position; NULL between runs */
  void **argv;            /* ffi argument pointers for one call */
  void **bufs;            /* the buffer arguments of one call */
} tj_run_t;

/* Frees a run state and the outputs it still holds (NULL: nothing). */
static void tj_run_discard(const tj_executable_t *exe, tj_run_t *r) {
  if (!r) return;
  if (r->outputs)
    for (int o = 0; o < exe->n_outputs; o++) tj_tensor_free(r->outputs[o]);
  tj_free(r->ptrs);
  tj_aligned_free(r->workspace);
  tj_free(r->outputs);
  tj_free(r->argv);
  tj_free(r->bufs);
  tj_free(r);
}

static tj_status_t *tj_run_new(const tj_executable_t *exe, tj_run_t **out) {
  size_t width = (size_t)exe->max_call_args + 1;
  tj_run_t *r = tj_calloc(1, sizeof *r);
  if (r) {
    r->ptrs = tj_calloc((size_t)exe->n_values + 1, sizeof *r->ptrs);
    r->outputs = tj_calloc((size_t)exe->n_outputs + 1, sizeof *r->outputs);
    r->argv = tj_calloc(width, sizeof *r->argv);
    r->bufs = tj_calloc(width, sizeof *r->bufs);
    if (exe->workspace_bytes) r->workspace = tj_aligned_alloc(exe->workspace_bytes);
  }
  if (!r || !r->ptrs || !r->outputs || !r->argv || !r->bufs || (exe->workspace_bytes && !r->workspace)) {
    tj_run_discard(exe, r);
    return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "out of memory preparing a run (workspace %zu bytes)",
                         exe->workspace_bytes);
  }
  atomic_fetch_add(&((tj_executable_t *)exe)->run_states_made, 1);
  *out = r;
  return NULL;
}

/* The spare run state if no other run holds it, else a new one. */
static tj_status_t *tj_run_acquire(const tj_executable_t *exe, tj_run_t **out) {
  tj_run_t *r = atomic_exchange(&((tj_executable_t *)exe)->spare_run, NULL);
  if (r) return *out = r, NULL;
  return tj_run_new(exe, out);
}

/* After a run: keeps r as the spare when the slot is empty, else frees it. A failed run
 * frees it too, so that a failure leaves no memory behind (test_alloc_failure). */
static void tj_run_release(const tj_executable_t *exe, tj_run_t *r, bool failed) {
  if (!r) return;
  for (int o = 0; o < exe->n_outputs; o++) {
    tj_tensor_free(r->outputs[o]);
    r->outputs[o] = NULL;
  }
  tj_run_t *empty = NULL;
  if (failed || !atomic_compare_exchange_strong(&((tj_executable_t *)exe)->spare_run, &empty, r)) tj_run_discard(exe, r);
}

/* The memory that receives output position o: the caller's destination when one is
 * given (checked against the output's dtype and shape; nothing is allocated), else a
 * fresh tensor in r->outputs[o] (not zero-filled: the kernel that defines it writes all
 * of it, as the workspace's intermediates are written and as TVM's alloc_tensor leaves it). */
static tj_status_t *tj_run_output(const tj_value_desc_t *d, const tj_tensor_t *dest, int o, tj_run_t *r, void **out_data) {
  if (!dest) {
    TJ_RETURN_IF_ERROR(
        tj_status_annotate(tj_tensor_new_uninit(d->dtype, d->ndim, d->shape, &r->outputs[o]), "output %d ('%s')", o, d->name));
    *out_data = r->outputs[o]->data;
    return NULL;
  }
  bool same = tj_dtype_eq(dest->dtype, d->dtype) && dest->ndim == d->ndim && (dest->data || d->nbytes == 0);
  for (int i = 0; same && i < d->ndim; i++) same = dest->shape[i] == d->shape[i];
  if (!same) {
    char want[128], got[128];
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "output %d ('%s'): the destination is %s%s, the output is %s", o, d->name,
                         tj_tensor_type_str(dest->dtype, dest->ndim, dest->shape, got, sizeof got),
                         dest->data || d->nbytes == 0 ? "" : " without data",
                         tj_tensor_type_str(d->dtype, d->ndim, d->shape, want, sizeof want));
  }
  *out_data = dest->data;
  return NULL;
}

/* Gives every value its memory for this run; OUTPUT values get their output tensors. */
static tj_status_t *tj_run_bind(const tj_executable_t *exe, const tj_tensor_t *const *inputs,
                                const tj_tensor_t *const *dest, tj_run_t *r) {
  for (int v = 0; v < exe->n_values; v++) {
    const tj_value_desc_t *d = &exe->values[v];
    switch (d->kind) {
      case TJ_VALUE_INPUT: r->ptrs[v] = inputs[d->index]->data; break;
      case TJ_VALUE_CONSTANT: r->ptrs[v] = (void *)d->const_data; break;
      case TJ_VALUE_INTERMEDIATE: r->ptrs[v] = r->workspace + d->offset; break;
      case TJ_VALUE_OUTPUT:
        TJ_RETURN_IF_ERROR(tj_run_output(d, dest ? dest[d->index] : NULL, d->index, r, &r->ptrs[v]));
        break;
      case TJ_VALUE_VIEW: r->ptrs[v] = (char *)r->ptrs[d->index] + d->offset; break;
    }
  }
  return NULL;
}

/* Runs one call; a kernel that could not allocate its temporaries skipped its body, so
 * the run stops there with a status. */
static tj_status_t *tj_run_call(const tj_executable_t *exe, const tj_call_t *call, tj_run_t *r) {
  const tj_kernel_t *k = exe->kernels[call->kernel];
  for (int a = 0; a < call->n_args; a++) r->bufs[a] = r->ptrs[call->args[a]];
  tj_kernel_call(k, r->bufs, call->scalars, r->argv);
  if (tj_kernel_take_alloc_failures() == 0) return NULL;
  return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "kernel '%s' (binding '%s') could not allocate its temporary storage",
                       k->name, call->binding);
}

/* Output positions that must not alias: copies of inputs, constants, intermediates, or
 * of an OUTPUT value already returned at its own position. */
static tj_status_t *tj_run_copy_outputs(const tj_executable_t *exe, const tj_tensor_t *const *dest, tj_run_t *r) {
  for (int o = 0; o < exe->n_outputs; o++) {
    if (!exe->output_is_copy[o]) continue;
    const tj_value_desc_t *d = &exe->values[exe->output_values[o]];
    void *data;
    TJ_RETURN_IF_ERROR(tj_run_output(d, dest ? dest[o] : NULL, o, r, &data));
    if (d->nbytes) memmove(data, r->ptrs[exe->output_values[o]], d->nbytes);
  }
  return NULL;
}

void tj_executable_set_thread_pool(tj_executable_t *exe, tj_thread_pool_t *pool) { exe->pool = pool; }

static double tj_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

const char *tj_executable_call_kernel(const tj_executable_t *exe, int c) {
  return c >= 0 && c < exe->n_calls ? exe->kernels[exe->calls[c].kernel]->name : NULL;
}

tj_status_t *tj_executable_run(const tj_executable_t *exe, int n_inputs, const tj_tensor_t *const *inputs,
                               int n_outputs, tj_tensor_t **out_outputs) {
  return tj_executable_run_timed(exe, n_inputs, inputs, n_outputs, out_outputs, NULL);
}

tj_status_t *tj_executable_run_timed(const tj_executable_t *exe, int n_inputs, const tj_tensor_t *const *inputs,
                                     int n_outputs, tj_tensor_t **out_outputs, double *call_ms) {
  return tj_executable_run_into(exe, n_inputs, inputs, n_outputs, NULL, out_outputs, call_ms);
}

tj_status_t *tj_executable_run_into(const tj_executable_t *exe, int n_inputs, const tj_tensor_t *const *inputs,
                                    int n_outputs, const tj_tensor_t *const *dest, tj_tensor_t **out_outputs,
                                    double *call_ms) {
  if (!exe->planned)
    return tj_status_new(TJ_ERR_INTERNAL, "the executable has no memory plan; call tj_executable_plan_memory after the last call is added");
  TJ_RETURN_IF_ERROR(tj_exe_check_inputs(exe, n_inputs, inputs));
  if (n_outputs != exe->n_outputs)
    return tj_status_new(TJ_ERR_INVALID_ARGUMENT, "expected room for %d output%s, got %d", exe->n_outputs,
                         exe->n_outputs == 1 ? "" : "s", n_outputs);
  tj_run_t *r = NULL;
  tj_status_t *s = tj_run_acquire(exe, &r);
  if (!s) s = tj_run_bind(exe, inputs, dest, r);
  tj_thread_pool_t *prev_pool = exe->pool ? tj_thread_pool_set_current(exe->pool) : NULL;
  (void)tj_kernel_take_alloc_failures(); /* counts from before this run are not ours */
  for (int c = 0; !s && c < exe->n_calls; c++) {
    double start = call_ms ? tj_now_ms() : 0;
    s = tj_run_call(exe, &exe->calls[c], r);
    if (call_ms) call_ms[c] = tj_now_ms() - start;
  }
  if (exe->pool) tj_thread_pool_set_current(prev_pool);
  if (!s) s = tj_run_copy_outputs(exe, dest, r);
  if (!s && !dest) {
    for (int o = 0; o < exe->n_outputs; o++) {
      out_outputs[o] = r->outputs[o];
      r->outputs[o] = NULL;
    }
  }
  tj_run_release(exe, r, s != NULL);
  return s;
}
