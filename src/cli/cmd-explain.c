/* cmd-explain.c - `kfold explain`: a short summary of kernel contexts and
 * of where stacks broke; `kfold --explain` is its old form.  It names no
 * frames, so it takes none of the naming options (--srcline, --pid, ...).
 */
#include "cli.h"

const struct cli_group *const cli_explain_groups[] = {
	&cli_io_group, &cli_count_group, &cli_find_group, &cli_pass_group,
	&cli_basic_group, NULL
};

int cli_explain_check(struct cli *c)
{
	return cli_refuse_compat(c);
}

int cli_explain_run(struct cli *c)
{
	/* the summary is by verdict and context */
	c->o.classify = true;
	return cli_run(c, CLI_LOAD_SAMPLES, kf_session_write_explain);
}
