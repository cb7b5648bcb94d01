/* transforms/tir/channel_slice.h on tests/models/channel_groups.rx (an expand 1x1 conv
 * and a stride-2 depthwise conv with bias and clip epilogues, 40 channels at 13x13, and
 * a projection that sums over the channels): which kernels compute each channel on its
 * own, and that a kernel sliced to channels [c0, c0 + count) computes, in the reference
 * interpreter, exactly the original's results on those channels (groups of 16, 16 and
 * the last one of 8), and JIT-compiled (strict float) the interpreter's bits. */
#include "differential.h"
#include "passes.h"
#include "transforms/tir/channel_slice.h"

enum { CHANNELS = 40, GROUP = 16 };

static const tj_module_t *load_groups_model(tj_arena_t *arena) {
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/models/channel_groups.rx", tu_source_dir());
  tj_module_t *m = NULL;
  TU_OK(tj_parse_file(arena, path, &m));
  return tu_run_passes(arena, "default", m);
}

/* Elements per channel of b when its channel dim (the one that is CHANNELS, after 1s)
 * exists, else 0. */
static int64_t per_channel(const tj_buffer_t *b) {
  int64_t v, n = 1;
  int dim = -1;
  for (int d = 0; d < b->ndim; d++) {
    ck_assert(tj_tir_is_const_int(b->shape[d], &v));
    if (dim >= 0) n *= v;
    else if (v == CHANNELS) dim = d;
    else if (v != 1) return 0;
  }
  return dim >= 0 ? n : 0;
}

START_TEST(expand_and_depthwise_are_channel_independent_the_projection_is_not) {
  tj_arena_t *arena = tj_arena_create();
  const tj_module_t *m = load_groups_model(arena);
  ck_assert(tj_tir_channels_independent(arena, tj_module_find_prim(m, "fused_conv2d_add_tir_clip"), CHANNELS));
  ck_assert(tj_tir_channels_independent(arena, tj_module_find_prim(m, "fused_conv2d1_add1_tir_clip1"), CHANNELS));
  ck_assert(!tj_tir_channels_independent(arena, tj_module_find_prim(m, "conv2d2"), CHANNELS));
  /* a channel count that is not the kernels' channel dim (6: the expand's input) */
  ck_assert(!tj_tir_channels_independent(arena, tj_module_find_prim(m, "fused_conv2d_add_tir_clip"), 6));
  tj_arena_free(arena);
}
END_TEST

/* f on random inputs in the interpreter; then each group's slice on the same data
 * advanced c0 channels must write the original's bytes of those channels. */
static void expect_slices_match(tj_arena_t *arena, const char *name) {
  const tj_prim_func_t *f = tj_module_find_prim(load_groups_model(arena), name);
  ck_assert_ptr_nonnull(f);
  int n = f->n_params;
  void *full[MAX_PARAMS], *part[MAX_PARAMS];
  int64_t elems[MAX_PARAMS], per[MAX_PARAMS];
  for (int i = 0; i < n; i++) {
    ck_assert(tj_buffer_static_size(f->buffer_map[i], &elems[i]));
    per[i] = per_channel(f->buffer_map[i]);
    full[i] = tj_aligned_alloc((size_t)elems[i] * 4 + 64);
    part[i] = tj_aligned_alloc((size_t)elems[i] * 4 + 64);
    ck_assert(full[i] && part[i]);
    fill_random(full[i], f->buffer_map[i]->dtype, elems[i]);
  }
  ck_assert_int_gt(per[n - 1], 0);
  TU_OK(tj_interp_run_named(name, f, n, full, NULL));
  for (int c0 = 0; c0 < CHANNELS; c0 += GROUP) {
    int count = CHANNELS - c0 < GROUP ? CHANNELS - c0 : GROUP;
    const tj_prim_func_t *g = NULL;
    TU_OK(tj_tir_channel_slice(arena, f, CHANNELS, count, &g));
    void *args[MAX_PARAMS];
    for (int i = 0; i < n - 1; i++) args[i] = per[i] ? (float *)full[i] + c0 * per[i] : full[i];
    memset(part[n - 1], 0xff, (size_t)elems[n - 1] * 4); /* NaNs where the slice did not write */
    args[n - 1] = part[n - 1];
    TU_OK(tj_interp_run_named(name, g, n, args, NULL));
    ck_assert_msg(memcmp(part[n - 1], (float *)full[n - 1] + c0 * per[n - 1], (size_t)(count * per[n - 1]) * 4) == 0,
                  "%s: channels %d..%d differ from the whole kernel's", name, c0, c0 + count - 1);
    tally_t t = {0};
    compare_function(arena, "channel_groups.rx", name, g, &t);
    ck_assert_int_eq(t.compared, 1);
    ck_assert_int_eq(t.exact, 1);
  }
  for (int i = 0; i < n; i++) {
    tj_aligned_free(full[i]);
    tj_aligned_free(part[i]);
  }
}

START_TEST(the_whole_kernels_match_the_interpreter) {
  ck_assert_ptr_null(tj_jit_create(&jit));
  tj_arena_t *arena = tj_arena_create();
  const tj_module_t *m = load_groups_model(arena);
  tally_t t = {0};
  for (int i = 0; i < m->n_funcs; i++)
    if (m->funcs[i].is_prim) compare_function(arena, "channel_groups.rx", m->funcs[i].name, m->funcs[i].prim, &t);
  report("channel_groups.rx", &t);
  ck_assert_int_eq(t.exact, 3);
  ck_assert_int_eq(t.failed, 0);
  tj_arena_free(arena);
  tj_jit_free(jit);
}
END_TEST

START_TEST(sliced_kernels_compute_the_original_channels_bit_for_bit) {
  ck_assert_ptr_null(tj_jit_create(&jit));
  tj_arena_t *arena = tj_arena_create();
  expect_slices_match(arena, "fused_conv2d_add_tir_clip");
  expect_slices_match(arena, "fused_conv2d1_add1_tir_clip1");
  tj_arena_free(arena);
  tj_jit_free(jit);
}
END_TEST

int main(void) {
  Suite *s = suite_create("channel_slice");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, expand_and_depthwise_are_channel_independent_the_projection_is_not);
  tcase_add_test(tc, the_whole_kernels_match_the_interpreter);
  tcase_add_test(tc, sliced_kernels_compute_the_original_channels_bit_for_bit);
  (void)compare_file; /* differential.h's, for files without a pipeline */
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
