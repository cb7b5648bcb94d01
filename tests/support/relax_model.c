/* Small models for operator tests (relax_model.h). */
#include "relax_model.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

static const char *const k_header =
    "from tvm.script import ir as I\n"
    "from tvm.script import tir as T\n"
    "from tvm.script import relax as R\n"
    "@I.ir_module\n"
    "class Module:\n"
    "    @R.function\n";

const char *tu_model_source(const char *main_text) {
  static char src[16384];
  snprintf(src, sizeof src, "%s%s", k_header, main_text);
  return src;
}

static tvmjit_status_t *load(tvmjit_instance_t *inst, const char *main_text, tvmjit_module_t **out_mod) {
  const char *src = tu_model_source(main_text);
  tvmjit_module_options_t opts;
  tvmjit_module_options_init(&opts);
  opts.passes = "default";
  return tvmjit_module_load_string(inst, "model.rx", src, strlen(src), &opts, out_mod);
}

const char *tu_model_error(const char *main_text) {
  static char msg[2048];
  tvmjit_instance_t *inst = NULL;
  tvmjit_module_t *mod = NULL;
  ck_assert_ptr_null(tvmjit_instance_create(NULL, &inst));
  tvmjit_status_t *st = load(inst, main_text, &mod);
  const char *r = NULL;
  if (st) {
    snprintf(msg, sizeof msg, "%s", tvmjit_status_message(st));
    tvmjit_status_free(st);
    r = msg;
  }
  tvmjit_module_free(mod);
  tvmjit_instance_free(inst);
  return r;
}

void tu_run_model(const char *main_text, int n_in, tvmjit_tensor_t *const *in, int n_out, tvmjit_tensor_t **outs) {
  tvmjit_instance_t *inst = NULL;
  tvmjit_module_t *mod = NULL;
  tvmjit_function_t *fn = NULL;
  ck_assert_ptr_null(tvmjit_instance_create(NULL, &inst));
  tvmjit_status_t *st = load(inst, main_text, &mod);
  ck_assert_msg(st == NULL, "%s", st ? tvmjit_status_message(st) : "");
  ck_assert_ptr_null(tvmjit_module_get_function(mod, "main", &fn));
  st = tvmjit_function_call(fn, n_in, (const tvmjit_tensor_t *const *)in, n_out, outs);
  ck_assert_msg(st == NULL, "%s", st ? tvmjit_status_message(st) : "");
  tvmjit_module_free(mod);
  tvmjit_instance_free(inst);
}
