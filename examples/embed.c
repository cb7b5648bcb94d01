/* A host program that embeds tvmjit: loads the seed model, runs it on buffers it owns
 * and checks the result against a reference output.
 *
 *   embed MODEL.rx DATA.npy PARAMS.npz EXPECTED.npy
 *
 * Exit 0 when the output equals EXPECTED bit for bit, 1 otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tvmjit.h>

static int fail(tvmjit_status_t *st) {
  fprintf(stderr, "embed: %s\n", tvmjit_status_message(st));
  tvmjit_status_free(st);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: embed MODEL.rx DATA.npy PARAMS.npz EXPECTED.npy\n");
    return 2;
  }
  tvmjit_instance_t *inst = NULL;
  tvmjit_module_t *mod = NULL;
  tvmjit_function_t *fn = NULL;
  tvmjit_status_t *st = tvmjit_instance_create(NULL, &inst);
  if (!st) st = tvmjit_module_load_file(inst, argv[1], NULL, &mod);
  if (!st) st = tvmjit_module_get_function(mod, "main", &fn);
  if (st) return fail(st);

  /* The input lives in memory this program owns; tvmjit only borrows it. */
  tvmjit_tensor_t *loaded = NULL, *expected = NULL;
  if ((st = tvmjit_tensor_load_npy(argv[2], &loaded))) return fail(st);
  size_t nbytes = tvmjit_tensor_nbytes(loaded);
  void *my_data = malloc(nbytes);
  if (!my_data) return 1;
  memcpy(my_data, tvmjit_tensor_data(loaded), nbytes);

  int n_inputs = tvmjit_function_num_inputs(fn);
  tvmjit_tensor_t **inputs = calloc((size_t)n_inputs, sizeof *inputs);
  int n_params = 0;
  char **names = NULL;
  tvmjit_tensor_t **params = NULL;
  if ((st = tvmjit_npz_load(argv[3], &n_params, &names, &params))) return fail(st);
  if (!st) st = tvmjit_tensor_wrap(tvmjit_tensor_dtype(loaded), tvmjit_tensor_ndim(loaded),
                                   tvmjit_tensor_shape(loaded), my_data, &inputs[0]);
  for (int i = 1; i < n_inputs && !st; i++) {
    const char *name;
    tvmjit_function_input_info(fn, i, &name, NULL, NULL, NULL);
    for (int k = 0; k < n_params; k++)
      if (strcmp(names[k], name) == 0) inputs[i] = params[k];
    if (!inputs[i]) {
      fprintf(stderr, "embed: %s has no array '%s'\n", argv[3], name);
      return 1;
    }
  }
  tvmjit_tensor_t *out = NULL;
  if (!st) st = tvmjit_function_call(fn, n_inputs, (const tvmjit_tensor_t *const *)inputs, 1, &out);
  if (!st) st = tvmjit_tensor_load_npy(argv[4], &expected);
  if (st) return fail(st);

  int same = tvmjit_tensor_nbytes(out) == tvmjit_tensor_nbytes(expected) &&
             memcmp(tvmjit_tensor_data(out), tvmjit_tensor_data(expected), tvmjit_tensor_nbytes(out)) == 0;
  printf("embed: output %s the reference (%zu bytes)\n", same ? "equals" : "DIFFERS FROM", tvmjit_tensor_nbytes(out));

  tvmjit_tensor_free(out);
  tvmjit_tensor_free(expected);
  tvmjit_tensor_free(inputs[0]);
  free(inputs);
  tvmjit_npz_free(n_params, names, params);
  tvmjit_tensor_free(loaded);
  free(my_data);
  tvmjit_module_free(mod);
  tvmjit_instance_free(inst);
  return same ? 0 : 1;
}
