/* Shared helpers for the DWARF fixtures (testdata/src/dwarf/, see
 * testdata/README.md).  These programs are built WITHOUT frame pointers
 * (-fomit-frame-pointer, gcc's default at -O2 on x86_64), so their stacks
 * can only be walked with CFI (.eh_frame): perf record --call-graph dwarf.
 *
 * DW_FN: not inlined, not cloned (.constprop/.isra), so every function of the
 * documented call graph keeps its own name and frame.
 */
#ifndef KFOLD_DW_COMMON_H
#define KFOLD_DW_COMMON_H

#include "fx-common.h"

#define DW_FN __attribute__((noipa))

#endif
