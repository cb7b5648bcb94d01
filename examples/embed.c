/* A host program that embeds tvmjit: loads the seed model, runs it through DLPack on
 * buffers it owns (inputs by name, the output written into its own memory) and checks
 * the result against a reference output.
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

  /* The input and the output live in memory this program owns: tvmjit reads and
   * writes them in place through DLPack (no copy, no allocation of the output). */
  tvmjit_tensor_t *loaded = NULL, *expected = NULL;
  if ((st = tvmjit_tensor_load_npy(argv[2], &loaded))) return fail(st);
  size_t nbytes = tvmjit_tensor_nbytes(loaded);
  void *my_input = malloc(nbytes);
  if (!my_input) return 1;
  memcpy(my_input, tvmjit_tensor_data(loaded), nbytes);

  tvmjit_dtype_t out_dtype;
  int out_ndim;
  const int64_t *out_shape;
  tvmjit_function_output_info(fn, 0, &out_dtype, &out_ndim, &out_shape);
  size_t out_bytes = tvmjit_dtype_to_dlpack(out_dtype).bits / 8;
  for (int i = 0; i < out_ndim; i++) out_bytes *= (size_t)out_shape[i];
  void *my_output = malloc(out_bytes ? out_bytes : 1);
  if (!my_output) return 1;

  /* Inputs by name: the first parameter is the data, the others come from the .npz. */
  int n_params = 0;
  char **names = NULL;
  tvmjit_tensor_t **params = NULL;
  if ((st = tvmjit_npz_load(argv[3], &n_params, &names, &params))) return fail(st);
  int n_inputs = tvmjit_function_num_inputs(fn);
  DLTensor *inputs = calloc((size_t)n_inputs, sizeof *inputs);
  const DLTensor **input_ptrs = calloc((size_t)n_inputs, sizeof *input_ptrs);
  const char **input_names = calloc((size_t)n_inputs, sizeof *input_names);
  if (!inputs || !input_ptrs || !input_names) return 1;
  for (int i = 0; i < n_inputs; i++) {
    tvmjit_function_input_info(fn, i, &input_names[i], NULL, NULL, NULL);
    const tvmjit_tensor_t *t = loaded;
    for (int k = 0; i > 0 && k < n_params; k++)
      if (strcmp(names[k], input_names[i]) == 0) t = params[k];
    if (i > 0 && t == loaded) {
      fprintf(stderr, "embed: %s has no array '%s'\n", argv[3], input_names[i]);
      return 1;
    }
    inputs[i] = (DLTensor){.data = i == 0 ? my_input : tvmjit_tensor_data(t), .device = {kDLCPU, 0},
                           .ndim = tvmjit_tensor_ndim(t), .dtype = tvmjit_dtype_to_dlpack(tvmjit_tensor_dtype(t)),
                           .shape = (int64_t *)tvmjit_tensor_shape(t)};
    input_ptrs[i] = &inputs[i];
  }
  DLTensor output = {.data = my_output, .device = {kDLCPU, 0}, .ndim = out_ndim,
                     .dtype = tvmjit_dtype_to_dlpack(out_dtype), .shape = (int64_t *)out_shape};
  DLTensor *outputs[] = {&output};
  st = tvmjit_function_call_dlpack(fn, n_inputs, input_names, input_ptrs, 1, outputs);
  if (!st) st = tvmjit_tensor_load_npy(argv[4], &expected);
  if (st) return fail(st);

  int same = out_bytes == tvmjit_tensor_nbytes(expected) && memcmp(my_output, tvmjit_tensor_data(expected), out_bytes) == 0;
  printf("embed: output %s the reference (%zu bytes)\n", same ? "equals" : "DIFFERS FROM", out_bytes);

  tvmjit_tensor_free(expected);
  free(inputs);
  free(input_ptrs);
  free(input_names);
  tvmjit_npz_free(n_params, names, params);
  tvmjit_tensor_free(loaded);
  free(my_input);
  free(my_output);
  tvmjit_module_free(mod);
  tvmjit_instance_free(inst);
  return same ? 0 : 1;
}
