/* support/vec and support/map: the one growable array and the one hash map. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "support/alloc.h"
#include "support/arena.h"
#include "support/map.h"
#include "support/vec.h"
#include "testutil.h"

typedef TJ_VEC(int) int_vec_t;

START_TEST(heap_vector_grows_and_frees) {
  long live = tj_alloc_live();
  int_vec_t v = {0};
  for (int i = 0; i < 1000; i++) ck_assert(tj_vec_push(&v, i * 3));
  ck_assert_int_eq(v.n, 1000);
  ck_assert_int_ge(v.cap, 1000);
  for (int i = 0; i < 1000; i++) ck_assert_int_eq(v.items[i], i * 3);
  tj_vec_clear(&v);
  ck_assert_int_eq(v.n, 0);
  tj_vec_free(&v);
  ck_assert_ptr_null(v.items);
  ck_assert_int_eq(tj_alloc_live(), live);
}
END_TEST

START_TEST(arena_vector_keeps_contents_across_growth) {
  tj_arena_t *a = tj_arena_create();
  tj_ptr_vec_t v = {.arena = a};
  int slots[100];
  for (int i = 0; i < 100; i++) ck_assert(tj_vec_push(&v, &slots[i]));
  for (int i = 0; i < 100; i++) ck_assert_ptr_eq(v.items[i], &slots[i]);
  ck_assert_int_eq(tj_ptr_vec_find(&v, &slots[42]), 42);
  ck_assert_int_eq(tj_ptr_vec_find(&v, NULL), -1);
  ck_assert(tj_ptr_vec_add_unique(&v, &slots[7]));
  ck_assert_int_eq(v.n, 100);
  tj_ptr_vec_remove_at(&v, 0);
  ck_assert_int_eq(v.n, 99);
  ck_assert_ptr_eq(v.items[0], &slots[1]);
  ck_assert(tj_vec_reserve(&v, 500));
  ck_assert_int_ge(v.cap, 599);
  tj_vec_free(&v); /* no-op for arena storage */
  tj_arena_free(a);
}
END_TEST

START_TEST(vector_push_reports_out_of_memory) {
  int_vec_t v = {0};
  for (int i = 0; i < 8; i++) ck_assert(tj_vec_push(&v, i));
  int *before = v.items;
  tj_alloc_fail_after(0);
  ck_assert(!tj_vec_push(&v, 8)); /* needs to grow: fails, vector unchanged */
  tj_alloc_fail_reset();
  ck_assert_ptr_eq(v.items, before);
  ck_assert_int_eq(v.n, 8);
  ck_assert_int_eq(v.cap, 8);
  for (int i = 0; i < 8; i++) ck_assert_int_eq(v.items[i], i);
  tj_vec_free(&v);

  tj_arena_t *a = tj_arena_create();
  tj_ptr_vec_t av = {.arena = a};
  tj_alloc_fail_after(0);
  ck_assert(!tj_vec_push(&av, a));
  tj_alloc_fail_reset();
  ck_assert_int_eq(av.n, 0);
  tj_arena_free(a);
}
END_TEST

START_TEST(pointer_map_puts_gets_and_replaces) {
  long live = tj_alloc_live();
  tj_map_t m = TJ_PTR_MAP(NULL);
  static int keys[2000];
  for (int i = 0; i < 2000; i++) ck_assert(tj_map_put(&m, &keys[i], (void *)(intptr_t)(i + 1)));
  ck_assert_uint_eq(m.n, 2000);
  for (int i = 0; i < 2000; i++) ck_assert_int_eq((intptr_t)tj_map_get(&m, &keys[i]), i + 1);
  ck_assert_ptr_null(tj_map_get(&m, &m));
  ck_assert(tj_map_put(&m, &keys[5], NULL)); /* NULL is a value like any other */
  void *v = (void *)1;
  ck_assert(tj_map_find(&m, &keys[5], &v));
  ck_assert_ptr_null(v);
  ck_assert(!tj_map_find(&m, &m, NULL));
  ck_assert(!tj_map_put(&m, NULL, v));
  ck_assert_uint_eq(m.n, 2000);
  tj_map_free(&m);
  ck_assert_int_eq(tj_alloc_live(), live);
}
END_TEST

START_TEST(map_remove_keeps_probe_chains) {
  tj_arena_t *a = tj_arena_create();
  tj_map_t m = TJ_PTR_MAP(a);
  static char keys[500];
  for (int i = 0; i < 500; i++) ck_assert(tj_map_put(&m, &keys[i], &keys[i]));
  for (int i = 0; i < 500; i += 2) ck_assert(tj_map_remove(&m, &keys[i]));
  ck_assert(!tj_map_remove(&m, &keys[0]));
  ck_assert_uint_eq(m.n, 250);
  for (int i = 0; i < 500; i++) ck_assert_ptr_eq(tj_map_get(&m, &keys[i]), i % 2 ? &keys[i] : NULL);
  size_t it = 0, count = 0;
  const void *k;
  void *val;
  while (tj_map_next(&m, &it, &k, &val)) {
    ck_assert_ptr_eq(k, val);
    count++;
  }
  ck_assert_uint_eq(count, 250);
  tj_arena_free(a);
}
END_TEST

START_TEST(string_map_compares_contents) {
  tj_map_t m = TJ_STR_MAP(NULL);
  char names[300][16];
  for (int i = 0; i < 300; i++) {
    snprintf(names[i], sizeof names[i], "var_%d", i);
    ck_assert(tj_map_put(&m, names[i], (void *)(intptr_t)i));
  }
  char probe[16];
  for (int i = 0; i < 300; i++) {
    snprintf(probe, sizeof probe, "var_%d", i); /* another copy of the same text */
    void *v = NULL;
    ck_assert(tj_map_find(&m, probe, &v));
    ck_assert_int_eq((intptr_t)v, i);
  }
  ck_assert(!tj_map_find(&m, "var_300", NULL));
  ck_assert(tj_map_remove(&m, "var_7"));
  ck_assert(!tj_map_find(&m, "var_7", NULL));
  tj_map_free(&m);
}
END_TEST

START_TEST(map_put_reports_out_of_memory) {
  long live = tj_alloc_live();
  tj_map_t m = TJ_PTR_MAP(NULL);
  static int keys[40];
  tj_alloc_fail_after(0);
  ck_assert(!tj_map_put(&m, &keys[0], &keys[0]));
  tj_alloc_fail_reset();
  ck_assert_uint_eq(m.n, 0);
  for (int i = 0; i < 32; i++) ck_assert(tj_map_put(&m, &keys[i], &keys[i]));
  tj_alloc_fail_after(1); /* growing needs two blocks: the second fails */
  ck_assert(!tj_map_put(&m, &keys[32], &keys[32]));
  tj_alloc_fail_reset();
  ck_assert_uint_eq(m.n, 32);
  for (int i = 0; i < 32; i++) ck_assert_ptr_eq(tj_map_get(&m, &keys[i]), &keys[i]);
  tj_map_free(&m);
  ck_assert_int_eq(tj_alloc_live(), live);
}
END_TEST

int main(void) {
  Suite *s = suite_create("containers");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, heap_vector_grows_and_frees);
  tcase_add_test(tc, arena_vector_keeps_contents_across_growth);
  tcase_add_test(tc, vector_push_reports_out_of_memory);
  tcase_add_test(tc, pointer_map_puts_gets_and_replaces);
  tcase_add_test(tc, map_remove_keeps_probe_chains);
  tcase_add_test(tc, string_map_compares_contents);
  tcase_add_test(tc, map_put_reports_out_of_memory);
  suite_add_tcase(s, tc);
  return tu_run_suite(s);
}
