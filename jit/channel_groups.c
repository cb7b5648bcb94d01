/* Channel groups: an expand 1x1 conv and the depthwise conv that alone reads its output
 * run a group of channels at a time (transforms/tir/channel_slice.h slices the kernels),
 * a rewrite of the calls jit/compile.c collected from main, before kernels compile. */
#include <stdlib.h>
#include <string.h>

#include "jit/build.h"
#include "support/alloc.h"
#include "transforms/tir/channel_slice.h"

static tj_status_t *oom(void) { return tj_status_new(TJ_ERR_OUT_OF_MEMORY, "channel groups: out of memory"); }

/* A 1x1 conv's output that only the next call reads, and that is over GROUP_BYTES, is
 * computed a group of channels at a time by both kernels when each computes every
 * channel on its own (MobileNetV2: the expand 1x1 conv and the depthwise conv after
 * it): group k runs the first kernel on its channels into a scratch buffer of
 * GROUP_BYTES at most, then the second one from it into its channels of the result, so
 * the intermediate stays in L2 (1.25 MB per core on Ice Lake) instead of going out to
 * L3 and back. MobileNetV2 on Ice Lake (docs/cpu-schedule.md): 96 x 112 x 112 (4.8 MB)
 * in groups of 16 channels (0.8 MB), 144 x 56 x 56 (1.8 MB) in groups of 48. The last
 * group may be smaller. TVMJIT_CHANNEL_GROUPS=0 turns this off; a number sets
 * GROUP_BYTES in KiB (for tests and experiments). */
#define GROUP_BYTES (1 << 20)
/* Group sizes are multiples of this: a vector of 16 floats in the 1x1 conv's tiles. */
#define GROUP_QUANTUM 16

static size_t group_bytes_limit(void) {
  const char *e = getenv("TVMJIT_CHANNEL_GROUPS");
  if (!e || !*e) return GROUP_BYTES;
  long kib = strtol(e, NULL, 10);
  return kib <= 0 ? 0 : (size_t)kib << 10;
}

/* The dim of b that is `channels` after only 1s (-1: none), and the elements per channel. */
static int channel_dim(const tj_buffer_t *b, int64_t channels, int64_t *per_channel) {
  int64_t v;
  for (int d = 0; d < b->ndim; d++) {
    if (!tj_tir_is_const_int(b->shape[d], &v)) return -1;
    if (v == channels) {
      int64_t n = 1;
      for (int k = d + 1; k < b->ndim; k++)
        if (tj_tir_is_const_int(b->shape[k], &v)) n *= v;
        else return -1;
      *per_channel = n;
      return d;
    }
    if (v != 1) return -1;
  }
  return -1;
}

static const tj_buffer_t *buffer_param(const tj_prim_func_t *f, int index) {
  for (int i = 0, k = 0; i < f->n_params; i++)
    if (f->buffer_map && f->buffer_map[i] && k++ == index) return f->buffer_map[i];
  return NULL;
}

/* How many times value v is an argument of a call, or a returned copy. */
static int uses_of(const build_t *bd, int v) {
  int n = 0;
  for (int c = 0; c < bd->n_calls; c++)
    for (int a = 0; a < bd->calls[c].n_args; a++) n += bd->calls[c].args[a] == v;
  for (int i = 0; i < bd->n_copies; i++) n += bd->copies[i] == v;
  return n;
}

static bool static_call(const build_t *bd, const pending_call_t *c) {
  const kernel_slot_t *ks = &bd->kernels[c->kernel];
  if (c->n_tir_vars || ks->n_shape || ks->n_chunks || c->n_out != 1) return false;
  for (int a = 0; a < c->n_args; a++)
    if (bd->shapes[c->args[a]]) return false;
  return true;
}

/* Every argument of call c with the channel dim is the intermediate, the result or a
 * constant (sliced per group); the others are read whole. */
static bool args_sliceable(const build_t *bd, const pending_call_t *c, int64_t channels, int mid, int result) {
  const tj_prim_func_t *f = bd->kernels[c->kernel].prim;
  for (int a = 0; a < c->n_args; a++) {
    const tj_buffer_t *b = buffer_param(f, a);
    int64_t per;
    if (!b) return false;
    if (channel_dim(b, channels, &per) < 0) continue;
    int v = c->args[a];
    if (v != mid && v != result && bd->values[v].kind != TJ_VALUE_CONSTANT) return false;
  }
  return true;
}

/* Whether f has a 1x1 conv's weight [channels, C, 1, 1] among its params. Only such a
 * first kernel is grouped: the 1x1 rule vectorizes along pixels, so 16 channels keep
 * its tiles, while MobileNetV2's stem (3x3/2, 3 -> 32, vectorized over output channels)
 * in 2 groups of 16 took 0.37 -> 0.51-0.53 ms (Ice Lake, 1 thread, 2 interleaved rounds),
 * more than the depthwise conv after it gained (0.32 -> 0.25-0.29). */
static bool has_pointwise_weight(const tj_prim_func_t *f, int64_t channels) {
  for (int p = 0; p < f->n_params; p++) {
    const tj_buffer_t *b = f->buffer_map ? f->buffer_map[p] : NULL;
    int64_t d[4];
    bool ok = b && b->ndim == 4;
    for (int k = 0; ok && k < 4; k++) ok = tj_tir_is_const_int(b->shape[k], &d[k]);
    if (ok && d[0] == channels && d[1] > 1 && d[2] == 1 && d[3] == 1) return true;
  }
  return false;
}

/* The channels per group for calls c1 (writing mid) and c2 (reading it), or 0. */
static int64_t group_size(build_t *bd, const pending_call_t *c1, const pending_call_t *c2, int *out_result) {
  int mid = c1->args[c1->n_args - 1], result = c2->args[c2->n_args - 1];
  const tj_value_desc_t *m = &bd->values[mid], *r = &bd->values[result];
  size_t limit = group_bytes_limit();
  if (!limit || !static_call(bd, c1) || !static_call(bd, c2) || m->kind != TJ_VALUE_INTERMEDIATE ||
      m->nbytes <= limit || m->ndim != 4 || m->shape[0] != 1 || r->ndim != 4 || r->shape[0] != 1 ||
      r->shape[1] != m->shape[1] || uses_of(bd, mid) != 2)
    return 0;
  int reads = 0;
  for (int a = 0; a < c2->n_args - 1; a++) reads += c2->args[a] == mid;
  int64_t channels = m->shape[1], plane = (int64_t)(m->nbytes / (size_t)channels), g = 0, even = 0;
  if (reads != 1) return 0;
  /* The largest group that fits, equal groups first (one sliced kernel each, not two):
   * 144 channels at 56x56 in 3 x 48 took 0.33 + 0.18 ms (expand, depthwise), in 80 + 64
   * 0.35 + 0.18 (Ice Lake, 1 thread, kernel medians over 60 runs). */
  for (int64_t k = GROUP_QUANTUM; k < channels; k += GROUP_QUANTUM)
    if ((size_t)(k * plane) <= limit) g = k, even = channels % k == 0 ? k : even;
  if (even) g = even;
  if (!g || !has_pointwise_weight(bd->kernels[c1->kernel].prim, channels) ||
      !args_sliceable(bd, c1, channels, mid, result) || !args_sliceable(bd, c2, channels, mid, result) ||
      !tj_tir_channels_independent(bd->arena, bd->kernels[c1->kernel].prim, channels) ||
      !tj_tir_channels_independent(bd->arena, bd->kernels[c2->kernel].prim, channels))
    return 0;
  *out_result = result;
  return g;
}

/* A value of `like`'s dtype with `count` channels at dim `dim`. */
static tj_status_t *sliced_value(build_t *bd, const char *name, const tj_value_desc_t *like, int dim, int64_t count,
                                 tj_value_kind_t kind, int *out_id) {
  int64_t dims[TJ_MAX_NDIM];
  for (int d = 0; d < like->ndim; d++) dims[d] = d == dim ? count : like->shape[d];
  const tj_sinfo_t *si = tj_sinfo_tensor_static(bd->arena, like->dtype, like->ndim, dims);
  if (!si) return oom();
  return tj_build_new_value(bd, name, si, kind, 0, "channel group", out_id);
}

/* Call c's arguments for channels [c0, c0 + g): the intermediate is the scratch, the
 * result a view of its channels, constants their slices. */
static tj_status_t *group_args(build_t *bd, const pending_call_t *c, int64_t channels, int64_t c0, int64_t g,
                               int mid, int scratch, int result, int **out) {
  const tj_prim_func_t *f = bd->kernels[c->kernel].prim;
  int *args = TJ_ARENA_ARRAY(bd->arena, int, c->n_args + 1);
  if (!args) return oom();
  for (int a = 0; a < c->n_args; a++) {
    int64_t per;
    int v = c->args[a], dim = channel_dim(buffer_param(f, a), channels, &per);
    args[a] = v;
    if (dim < 0) continue;
    if (v == mid) {
      args[a] = scratch;
      continue;
    }
    const char *name = tj_arena_printf(bd->arena, "%s[%lld:%lld]", bd->values[v].name, (long long)c0, (long long)(c0 + g));
    if (!name) return oom();
    size_t offset = (size_t)(c0 * per) * tj_dtype_bytes(bd->values[v].dtype);
    tj_value_kind_t kind = v == result ? TJ_VALUE_VIEW : TJ_VALUE_CONSTANT;
    TJ_RETURN_IF_ERROR(sliced_value(bd, name, &bd->values[v], dim, g, kind, &args[a]));
    tj_value_desc_t *s = &bd->values[args[a]];
    if (kind == TJ_VALUE_VIEW) s->index = v, s->offset = offset;
    else s->const_data = (const char *)bd->values[v].const_data + offset;
  }
  *out = args;
  return NULL;
}

/* Bit p: param p of f gets a constant in `args` (as constant_params, for a group). */
static uint64_t constant_args(const build_t *bd, const tj_prim_func_t *f, const int *args) {
  uint64_t mask = 0;
  int64_t elems;
  if (bd->opts && bd->opts->no_prepack) return 0;
  for (int p = 0, a = 0; p < f->n_params && p < 64; p++) {
    if (!f->buffer_map[p]) continue;
    if (bd->values[args[a++]].kind == TJ_VALUE_CONSTANT && tj_buffer_static_size(f->buffer_map[p], &elems))
      mask |= (uint64_t)1 << p;
  }
  return mask;
}

/* Call c for one group: its kernel sliced to g channels, its arguments as group_args. */
static tj_status_t *group_call(build_t *bd, const pending_call_t *c, int64_t channels, int64_t c0, int64_t g,
                               int mid, int scratch, int result, pending_call_t *out) {
  const kernel_slot_t *ks = &bd->kernels[c->kernel];
  const tj_prim_func_t *sliced = NULL;
  int *args = NULL, slot = 0;
  TJ_RETURN_IF_ERROR(tj_tir_channel_slice(bd->arena, ks->prim, channels, g, &sliced));
  TJ_RETURN_IF_ERROR(group_args(bd, c, channels, c0, g, mid, scratch, result, &args));
  const char *name = tj_arena_printf(bd->arena, "%s_channels%lld", ks->name, (long long)g);
  const char *binding = tj_arena_printf(bd->arena, "%s[%lld:%lld]", c->binding, (long long)c0, (long long)(c0 + g));
  if (!name || !binding) return oom();
  TJ_RETURN_IF_ERROR(tj_status_annotate(tj_build_kernel_for_prim(bd, name, sliced, constant_args(bd, sliced, args), &slot),
                                        "binding '%s'", binding));
  *out = (pending_call_t){slot, c->n_args, args, 1, 0, NULL, binding};
  return NULL;
}

/* Calls i and i + 1 as n = ceil(channels / g) pairs of group calls; the last group's
 * scratch is a view of its first channels when it has fewer than g. */
static tj_status_t *split_pair(build_t *bd, int i, int64_t g, int64_t n, int result) {
  pending_call_t c1 = bd->calls[i], c2 = bd->calls[i + 1];
  int mid = c1.args[c1.n_args - 1], scratch, last = -1;
  int64_t channels = bd->values[mid].shape[1], rest = channels - (n - 1) * g;
  const char *name = tj_arena_printf(bd->arena, "%s[group]", bd->values[mid].name);
  if (!name) return oom();
  TJ_RETURN_IF_ERROR(sliced_value(bd, name, &bd->values[mid], 1, g, TJ_VALUE_INTERMEDIATE, &scratch));
  if (rest < g) {
    TJ_RETURN_IF_ERROR(sliced_value(bd, name, &bd->values[mid], 1, rest, TJ_VALUE_VIEW, &last));
    bd->values[last].index = scratch;
  }
  pending_call_t *calls = TJ_ARENA_ARRAY(bd->arena, pending_call_t, bd->n_calls + 2 * n);
  if (!calls) return oom();
  memcpy(calls, bd->calls, sizeof *calls * (size_t)i);
  for (int64_t k = 0; k < n; k++) {
    int64_t count = k == n - 1 ? rest : g;
    int into = count < g ? last : scratch;
    TJ_RETURN_IF_ERROR(group_call(bd, &c1, channels, k * g, count, mid, into, result, &calls[i + 2 * k]));
    TJ_RETURN_IF_ERROR(group_call(bd, &c2, channels, k * g, count, mid, into, result, &calls[i + 2 * k + 1]));
  }
  memcpy(calls + i + 2 * n, bd->calls + i + 2, sizeof *calls * (size_t)(bd->n_calls - i - 2));
  bd->calls = calls;
  bd->n_calls += (int)(2 * n - 2);
  bd->cap_calls = bd->n_calls;
  return NULL;
}

/* Kernels queued for calls that channel groups replaced (no call runs them any more)
 * leave the queue unless a used slot shares them: MobileNetV2's cold compile did 5
 * kernels for nothing. Their slots keep no code (build_executable skips them). */
static void drop_unused_queued(build_t *bd) {
  bool *used = TJ_ARENA_ARRAY(bd->arena, bool, bd->n_kernels + 1);
  int *keep = TJ_ARENA_ARRAY(bd->arena, int, bd->queue.n + 1);
  if (!used || !keep) return; /* nothing dropped: they are compiled, as before */
  memset(used, 0, sizeof *used * (size_t)(bd->n_kernels + 1));
  for (int c = 0; c < bd->n_calls; c++) used[bd->calls[c].kernel] = true;
  for (int q = 0; q < bd->queue.n; q++) keep[q] = -1;
  for (int k = 0; k < bd->n_kernels; k++)
    if (used[k] && bd->kernels[k].pending >= 0) keep[bd->kernels[k].pending] = 0;
  int n = 0;
  for (int q = 0; q < bd->queue.n; q++) {
    pending_kernel_t *item = &bd->queue.items[q];
    if (keep[q] < 0) {
      tj_arena_free(item->arena);
      tj_free(item->text);
      tj_free(item->symbol);
      continue;
    }
    keep[q] = n;
    bd->queue.items[n++] = *item;
  }
  bd->queue.n = n;
  for (int k = 0; k < bd->n_kernels; k++)
    if (bd->kernels[k].pending >= 0) bd->kernels[k].pending = keep[bd->kernels[k].pending];
}

tj_status_t *tj_build_group_channels(build_t *bd) {
  bool grouped = false;
  for (int i = 0; i + 1 < bd->n_calls; i++) {
    int result = -1;
    int64_t g = group_size(bd, &bd->calls[i], &bd->calls[i + 1], &result);
    if (!g) continue;
    int64_t channels = bd->values[bd->calls[i].args[bd->calls[i].n_args - 1]].shape[1], n = (channels + g - 1) / g;
    TJ_RETURN_IF_ERROR(split_pair(bd, i, g, n, result));
    i += (int)(2 * n - 1);
    grouped = true;
  }
  if (grouped) drop_unused_queued(bd);
  return NULL;
}
