/* Everything ir/ offers: data types and attrs, TIR and Relax nodes, modules, the
 * generic walks, reader, printer, structural equality, verifier, op registry, the
 * reference TIR interpreter and FLOP counts. */
#ifndef TJ_IR_IR_H
#define TJ_IR_IR_H

#include "ir/attrs.h"
#include "ir/flops.h"
#include "ir/interp.h"
#include "ir/module.h"
#include "ir/op.h"
#include "ir/text/parse.h"
#include "ir/text/print.h"
#include "ir/relax.h"
#include "ir/struct_equal.h"
#include "ir/tir.h"
#include "ir/verify/verify.h"
#include "ir/visit.h"
#include "support/arena.h"
#include "support/dtype.h"
#include "support/status.h"

#endif
