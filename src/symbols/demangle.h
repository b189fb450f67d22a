/* demangle.h - symbol names as perf 6.1 shows them.
 *
 * C++ and Rust (legacy and v0) names go through libiberty's cplus_demangle
 * with no options, which is what perf 6.1 built without libbfd calls
 * (symbol-elf.c: demangle_sym): no parameter lists, no clone suffixes,
 * no Rust hash.  If that fails, OCaml names ("camlModule__fn") are
 * demangled the way perf's demangle-ocaml.c does.  The only file that
 * includes libiberty.
 *
 * May use: libc, libiberty.
 */
#ifndef KF_DEMANGLE_H
#define KF_DEMANGLE_H

/* A malloc'd demangled name, or NULL when name is not mangled (or on
 * ENOMEM: the caller then keeps the raw name). */
char *kf_demangle(const char *name);

#endif
