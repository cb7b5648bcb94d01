/* STUB: replaced by the operator registry. */
#include "ir/op.h"
const tj_op_def_t *tj_op_lookup(const char *name) { return NULL; }
const tj_op_def_t *tj_op_lookup_script(const char *name) { return NULL; }
