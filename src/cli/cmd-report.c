/* cmd-report.c - `kfold report`: the JSON report
 * (docs/kfold-report.schema.json); `kfold --format json` is its old form.
 */
#include "cli.h"

const struct cli_group *const cli_report_groups[] = {
	&cli_io_group, &cli_name_group, &cli_count_group, &cli_find_group,
	&cli_pass_group, &cli_basic_group, NULL
};

int cli_report_check(struct cli *c)
{
	return cli_refuse_compat(c);
}

int cli_report_run(struct cli *c)
{
	/* the report has every sample's verdict and contexts */
	c->o.classify = true;
	return cli_run(c, CLI_LOAD_SAMPLES, kf_session_write_json);
}
