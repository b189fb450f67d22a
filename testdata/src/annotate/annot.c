/* annot: hot loops for the `kfold annotate` captures (testdata/annotate/,
 * recorded by scripts/record-annotate.sh).  Each function is a different
 * kind of code for an annotator to get right:
 *   hash_words   integer loop with a 10-byte movabs (objdump prints such an
 *                instruction on two lines with --show-raw-insn)
 *   poly_eval    SSE floating point
 *   dispatch     a switch compiled to a jump table, with a cold error path
 *                (gcc moves it to dispatch.cold in .text.unlikely)
 *   name_lengths strlen through the PLT, so the PLT stub and libc are hot
 *   spin_asm     hand-written assembly whose symbol has no size (size 0):
 *                perf extends it to the next symbol
 *   walk_list    pointer chasing (loads that miss)
 * main calls them in turn for argv[1] seconds (default 0.3).
 */
#include <stdlib.h>
#include <string.h>

#include "../fx-common.h"

static volatile unsigned long sink;

NOINLINE static unsigned long hash_words(const unsigned long *w, int n)
{
	unsigned long h = 0xcbf29ce484222325UL;

	for (int i = 0; i < n; i++) {
		h ^= w[i];
		h *= 0x100000001b3UL;
		h ^= h >> 29;
	}
	return h;
}

NOINLINE double poly_eval(const double *c, int n, double x)
{
	double acc = 0.0;

	for (int r = 0; r < 64; r++) {
		double y = 0.0;
		for (int i = n - 1; i >= 0; i--)
			y = y * x + c[i];
		acc += y;
		x += 1e-3;
	}
	return acc;
}

__attribute__((cold, noinline)) static void bad_op(int op)
{
	sink += (unsigned long)op;
}

NOINLINE long dispatch(const int *ops, int n, long v)
{
	for (int i = 0; i < n; i++) {
		switch (ops[i]) {
		case 0: v += 3; break;
		case 1: v ^= v << 7; break;
		case 2: v -= i; break;
		case 3: v *= 5; break;
		case 4: v = (v >> 3) | 1; break;
		case 5: v += v >> 11; break;
		case 6: v ^= 0x5555; break;
		case 7: v = ~v; break;
		default: bad_op(ops[i]); break;
		}
	}
	return v;
}

NOINLINE static size_t name_lengths(const char *const *names, int n)
{
	size_t total = 0;

	for (int r = 0; r < 16; r++)
		for (int i = 0; i < n; i++)
			total += strlen(names[i]);
	return total;
}

/* unsigned long spin_asm(unsigned long n): a loop of n rounds; no .size */
__asm__(".text\n"
	".globl spin_asm\n"
	".type spin_asm, @function\n"
	"spin_asm:\n"
	"	mov %rdi, %rax\n"
	"	xor %edx, %edx\n"
	"1:	add %rax, %rdx\n"
	"	rol $5, %rdx\n"
	"	sub $1, %rdi\n"
	"	jnz 1b\n"
	"	mov %rdx, %rax\n"
	"	ret\n");
unsigned long spin_asm(unsigned long n);

struct node {
	struct node *next;
	unsigned long val;
};

NOINLINE static unsigned long walk_list(const struct node *p)
{
	unsigned long s = 0;

	while (p) {
		s += p->val;
		p = p->next;
	}
	return s;
}

#define NW 512
#define NNODES 1024

int main(int argc, char **argv)
{
	double secs = fx_seconds(argc, argv, 0.3), t0 = fx_now();
	static unsigned long words[NW];
	static int ops[NW];
	static struct node nodes[NNODES];
	static const char *const names[] = {
		"alpha", "beta", "gamma", "delta-epsilon", "zeta", "eta-theta-iota",
		"kappa", "lambda", "mu", "nu-xi-omicron-pi-rho-sigma",
	};
	double coef[12];

	for (int i = 0; i < NW; i++) {
		words[i] = (unsigned long)i * 2654435761UL;
		ops[i] = (i * 7 + i / 5) % 8;
	}
	for (int i = 0; i < 12; i++)
		coef[i] = 1.0 / (i + 1);
	/* one list through every node, in an order that jumps around */
	for (int i = 0; i < NNODES; i++) {
		struct node *p = &nodes[(i * 1031) % NNODES];

		p->next = i + 1 < NNODES ? &nodes[((i + 1) * 1031) % NNODES] : NULL;
		p->val = (unsigned long)i;
	}

	while (fx_now() - t0 < secs) {
		for (int k = 0; k < 50; k++) {
			sink += hash_words(words, NW);
			sink += (unsigned long)poly_eval(coef, 12, 0.5);
			sink += (unsigned long)dispatch(ops, NW, (long)k);
			sink += name_lengths(names, 10);
			sink += spin_asm(300);
			sink += walk_list(&nodes[0]);
		}
	}
	return (int)(sink & 1);
}
