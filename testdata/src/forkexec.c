/* forkexec: the parent forks; the child execs /tmp/kfold-fx/bin/forkexec-child
 * while the parent works (main -> parent_work -> parent_leaf and
 * main -> parent_work -> parent_mid -> parent_leaf), then waits. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fx-common.h"

volatile unsigned long sink;

NOINLINE unsigned long parent_leaf(unsigned long x)
{
	FX_LEAF_FRAME();
	for (int i = 0; i < 5000; i++)
		x = (x << 7) ^ (x >> 3) ^ (unsigned long)i;
	return x;
}

NOINLINE unsigned long parent_mid(unsigned long x)
{
	return parent_leaf(x + 1) ^ 1;
}

NOINLINE void parent_work(double secs)
{
	double end = fx_now() + secs;
	unsigned long x = 1;
	while (fx_now() < end) {
		x = parent_leaf(x);
		x = parent_mid(x);
	}
	sink = x;
}

int main(int argc, char **argv)
{
	double secs = fx_seconds(argc, argv, 0.15);
	char arg[32];
	pid_t pid;

	snprintf(arg, sizeof arg, "%g", secs);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		execl("/tmp/kfold-fx/bin/forkexec-child", "forkexec-child", arg,
		      (char *)NULL);
		_exit(127);
	}
	parent_work(secs);
	waitpid(pid, NULL, 0);
	return 0;
}
