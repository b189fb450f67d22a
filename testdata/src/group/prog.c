/* prog.c - the workload of testdata/cases/group (scripts/record-group.sh).
 *
 * Freestanding (no libc: -nostdlib -static), so the capture's every frame is
 * in this one small binary and the case carries its own symfs.  _start
 * clears the frame pointer, calls main and exits; main alternates two
 * loops, so each event of the group has two stacks to weigh. */
__asm__(".globl _start\n"
	"_start:\n"
	"\txor %ebp, %ebp\n"
	"\tcall main\n"
	"\tmov $60, %eax\n"
	"\txor %edi, %edi\n"
	"\tsyscall\n");

int main(void);

static volatile unsigned long sink;

__attribute__((noinline)) static void spin_short(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) static void spin_long(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink ^= i * 3;
}

int main(void)
{
	int r;

	for (r = 0; r < 20; r++) {
		spin_short(1000000);
		spin_long(3000000);
	}
	return 0;
}
