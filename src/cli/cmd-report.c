/* cmd-report.c - `kfold report`: the JSON report
 * (docs/kfold-report.schema.json); `kfold --format json` is its old form.
 */
#include "cli.h"

const struct kf_cli_group *const kf_cli_report_groups[] = {
	&kf_cli_io_group, &kf_cli_name_group, &kf_cli_count_group, &kf_cli_filter_group,
	&kf_cli_find_group, &kf_cli_pass_group, &kf_cli_basic_group, NULL
};

int kf_cli_report_check(struct kf_cli *c)
{
	return kf_cli_refuse_compat(c);
}

int kf_cli_report_run(struct kf_cli *c)
{
	/* the report has every sample's verdict and contexts */
	c->o.classify = true;
	/* its threads in a table beside the stacks, not a root each */
	c->o.thread_table = true;
	return kf_cli_run(c, KF_CLI_LOAD_SAMPLES, kf_session_write_json);
}
