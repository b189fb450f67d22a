/* demangle.c - libiberty's demangler, and perf's OCaml rule. */
#include "demangle.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

/* "camlStdlib__Array__map_154" -> "Stdlib.Array.map_154"; "$xx" is a
 * hex-escaped character. */
static char *ocaml(const char *sym)
{
	size_t len, i = 4, j = 0;
	char *out;

	if (strncmp(sym, "caml", 4) != 0 || !isupper((unsigned char)sym[4]))
		return NULL;
	len = strlen(sym);
	out = malloc(len + 1);
	if (!out)
		return NULL;
	while (i < len) {
		if (sym[i] == '_' && sym[i + 1] == '_') {
			out[j++] = '.';
			i += 2;
		} else if (sym[i] == '$' && isxdigit((unsigned char)sym[i + 1]) &&
			   isxdigit((unsigned char)sym[i + 2])) {
			out[j++] = (char)(hexval(sym[i + 1]) << 4 | hexval(sym[i + 2]));
			i += 3;
		} else {
			out[j++] = sym[i++];
		}
	}
	out[j] = '\0';
	return out;
}

char *kf_demangle(const char *name)
{
	char *d = cplus_demangle(name, DMGL_NO_OPTS);

	return d ? d : ocaml(name);
}
