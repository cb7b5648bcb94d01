/* support/: status values, arena, dtypes, half conversion, allocation hook. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "support/alloc.h"
#include "support/arena.h"
#include "support/dtype.h"
#include "support/status.h"
#include "support/strbuf.h"
#include "testutil.h"

START_TEST(status_carries_code_message_and_context) {
  tj_status_t *s = tj_status_new(TJ_ERR_PARSE, "bad %s", "token");
  s = tj_status_annotate(s, "while reading '%s'", "m.rx");
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_PARSE);
  ck_assert_str_eq(tj_status_message(s), "bad token");
  ck_assert_str_eq(tj_status_text(s), "while reading 'm.rx': bad token");
  ck_assert_ptr_null(tj_status_annotate(NULL, "x"));
  tj_status_free(s);
}
END_TEST

START_TEST(status_survives_out_of_memory) {
  tj_alloc_fail_after(0);
  tj_status_t *s = tj_status_new(TJ_ERR_IO, "cannot open");
  tj_alloc_fail_reset();
  ck_assert_int_eq(tj_status_code(s), TJ_ERR_OUT_OF_MEMORY);
  tj_status_free(s); /* static status: must be a no-op */
}
END_TEST

START_TEST(arena_allocates_zeroed_aligned_memory) {
  tj_arena_t *a = tj_arena_create();
  for (int i = 0; i < 1000; i++) {
    unsigned char *p = tj_arena_alloc(a, (size_t)(i % 97) + 1);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq((uintptr_t)p % 16, 0);
    ck_assert_int_eq(p[0], 0);
    memset(p, 0xff, (size_t)(i % 97) + 1);
  }
  void *big = tj_arena_alloc(a, 1 << 20);
  ck_assert_ptr_nonnull(big);
  ck_assert_str_eq(tj_arena_printf(a, "%s%d", "conv2d", 2), "conv2d2");
  tj_arena_free(a);
}
END_TEST

/* An adopted block stays valid while the arena lives and is freed with it. */
START_TEST(arena_frees_adopted_blocks_with_itself) {
  long live = tj_alloc_live();
  tj_arena_t *a = tj_arena_create();
  int *block = tj_malloc(64 * sizeof(int));
  ck_assert_ptr_nonnull(block);
  for (int i = 0; i < 64; i++) block[i] = i * 3;
  ck_assert(tj_arena_adopt(a, block));
  for (int i = 0; i < 1000; i++) ck_assert_ptr_nonnull(tj_arena_alloc(a, 100)); /* new chunks */
  for (int i = 0; i < 64; i++) ck_assert_int_eq(block[i], i * 3);
  ck_assert_int_gt(tj_alloc_live(), live);
  tj_arena_free(a);
  ck_assert_int_eq(tj_alloc_live(), live);
}
END_TEST

START_TEST(dtype_names_round_trip) {
  const char *names[] = {"float16", "float32", "float64", "int8", "int16", "int32", "int64",
                         "uint8", "uint16", "uint32", "uint64", "bool", "float32x16", "handle", "bfloat16",
                         "bfloat16x8"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    tj_dtype_t d;
    char buf[TJ_DTYPE_BUFSIZE];
    ck_assert_msg(tj_dtype_parse(names[i], &d), "parse %s", names[i]);
    ck_assert_str_eq(tj_dtype_str(d, buf), names[i]);
  }
  tj_dtype_t d;
  ck_assert(!tj_dtype_parse("float17", &d));
  ck_assert(!tj_dtype_parse("int", &d));
  ck_assert(!tj_dtype_parse("float32x", &d));
  ck_assert(!tj_dtype_parse("bfloat32", &d)); /* TVM has only 16-bit bfloat */
  ck_assert(tj_dtype_parse("bfloat16", &d) && !tj_dtype_is_float(d) && tj_dtype_bytes(d) == 2);
  ck_assert_int_eq(tj_dtype_bytes(TJ_F16), 2);
  ck_assert_int_eq(tj_dtype_bytes(TJ_BOOL), 1);
}
END_TEST

START_TEST(half_conversion_matches_ieee) {
  /* Exhaustive: every finite half converts to float and back unchanged. */
  for (uint32_t h = 0; h < 0x10000; h++) {
    float f = tj_half_to_float((uint16_t)h);
    if (isnan(f)) continue;
    ck_assert_uint_eq(tj_float_to_half(f), h);
  }
  ck_assert_uint_eq(tj_float_to_half(65504.0f), 0x7bff);
  ck_assert_uint_eq(tj_float_to_half(65520.0f), 0x7c00);   /* rounds to inf */
  ck_assert_uint_eq(tj_float_to_half(1.0f + 1.0f / 2048), 0x3c00); /* tie to even */
  ck_assert_uint_eq(tj_float_to_half(1.0f + 3.0f / 2048), 0x3c02);
  ck_assert_uint_eq(tj_float_to_half(5.960464477539063e-08f), 0x0001); /* smallest subnormal */
  ck_assert_uint_eq(tj_float_to_half(2.98023223876953125e-08f), 0x0000); /* half of it: tie to 0 */
}
END_TEST

/* bfloat16 = the top 16 bits of a float32; expected bits derived by hand. */
START_TEST(bfloat_conversion_rounds_to_nearest_even) {
  for (uint32_t b = 0; b < 0x10000; b++) { /* every non-NaN bfloat16 survives the trip */
    float f = tj_bfloat_to_float((uint16_t)b);
    if (!isnan(f)) ck_assert_uint_eq(tj_float_to_bfloat(f), b);
  }
  ck_assert(tj_bfloat_to_float(0x3f80) == 1.0f);
  ck_assert(tj_bfloat_to_float(0xc040) == -3.0f);
  ck_assert_uint_eq(tj_float_to_bfloat(1.0f + 1.0f / 256), 0x3f80);   /* tie, even below */
  ck_assert_uint_eq(tj_float_to_bfloat(1.0f + 3.0f / 256), 0x3f82);   /* tie, even above */
  ck_assert_uint_eq(tj_float_to_bfloat(1.0f + 1.0f / 256 + 1.0f / 65536), 0x3f81); /* past the tie: up */
  ck_assert_uint_eq(tj_float_to_bfloat(3.4028235e38f), 0x7f80);       /* FLT_MAX rounds to inf */
  ck_assert_uint_eq(tj_float_to_bfloat(-INFINITY), 0xff80);
  ck_assert(isnan(tj_bfloat_to_float(tj_float_to_bfloat(NAN))));
  uint32_t snan_bits = 0x7f800001u; /* a NaN whose payload is all in the low half */
  float snan;
  memcpy(&snan, &snan_bits, sizeof snan);
  ck_assert(isnan(tj_bfloat_to_float(tj_float_to_bfloat(snan))));
}
END_TEST

START_TEST(strbuf_builds_strings) {
  tj_strbuf_t sb;
  tj_strbuf_init(&sb);
  for (int i = 0; i < 1000; i++) tj_strbuf_printf(&sb, "%d,", i % 10);
  char *s = tj_strbuf_take(&sb);
  ck_assert_int_eq(strlen(s), 2000);
  ck_assert(strncmp(s, "0,1,2,", 6) == 0);
  tj_free(s);
}
END_TEST

/* Large aligned blocks are reused after free (runs allocate the same sizes each time;
 * fresh memory costs a page fault per page); small ones and ones much larger than
 * asked are not; failure injection still applies. Sanitizer builds bypass the cache. */
START_TEST(large_aligned_blocks_are_reused) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return;
#endif
  tj_alloc_release_cached();
  char *a = tj_aligned_alloc(1 << 20);
  ck_assert_ptr_nonnull(a);
  ck_assert_uint_eq((uintptr_t)a % 64, 0);
  memset(a, 7, 1 << 20);
  tj_aligned_free(a);
  char *b = tj_aligned_alloc((1 << 20) - 100); /* a little smaller: same block */
  ck_assert_ptr_eq(b, a);
  char *c = tj_aligned_alloc(1 << 19);         /* no cached block left */
  ck_assert_ptr_ne(c, a);
  tj_aligned_free(b);
  char *d = tj_aligned_alloc(300 * 1024);      /* less than half of the cached 1 MiB */
  ck_assert_ptr_ne(d, a);
  tj_aligned_free(d);
  tj_aligned_free(c);
  char *s1 = tj_aligned_alloc(4096);
  tj_aligned_free(s1); /* small: back to malloc, not cached */
  tj_alloc_fail_after(0);
  ck_assert_ptr_null(tj_aligned_alloc(1 << 20)); /* injection wins over the cache */
  tj_alloc_fail_reset();
  tj_alloc_release_cached();
}
END_TEST

int main(void) {
  Suite *s = suite_create("support");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, status_carries_code_message_and_context);
  tcase_add_test(tc, status_survives_out_of_memory);
  tcase_add_test(tc, arena_allocates_zeroed_aligned_memory);
  tcase_add_test(tc, arena_frees_adopted_blocks_with_itself);
  tcase_add_test(tc, dtype_names_round_trip);
  tcase_add_test(tc, half_conversion_matches_ieee);
  tcase_add_test(tc, bfloat_conversion_rounds_to_nearest_even);
  tcase_add_test(tc, strbuf_builds_strings);
  tcase_add_test(tc, large_aligned_blocks_are_reused);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
