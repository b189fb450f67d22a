/* cmd-explain.c - `kfold explain`: a short summary of kernel contexts and
 * of where stacks broke; `kfold --explain` is its old form.  It names no
 * frames, so it takes none of the naming options (--srcline, --pid, ...).
 */
#include "cli.h"

const struct kf_cli_group *const kf_cli_explain_groups[] = {
	&kf_cli_io_group, &kf_cli_count_group, &kf_cli_filter_group, &kf_cli_find_group,
	&kf_cli_pass_group, &kf_cli_basic_group, NULL
};

int kf_cli_explain_check(struct kf_cli *c)
{
	return kf_cli_refuse_compat(c);
}

int kf_cli_explain_run(struct kf_cli *c)
{
	/* the summary is by verdict and context */
	c->o.classify = true;
	/* its threads in a table beside the stacks, not a root each */
	c->o.thread_table = true;
	return kf_cli_run(c, KF_CLI_LOAD_SAMPLES, kf_session_write_explain);
}
