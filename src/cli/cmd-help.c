/* cmd-help.c - `kfold help [COMMAND]`: the usage of kfold, or of one
 * command (the same text as `kfold COMMAND --help`), on stdout.
 */
#include "cli.h"

const struct kf_cli_group *const kf_cli_help_groups[] = { &kf_cli_basic_group, NULL };

int kf_cli_help_run(struct kf_cli *c)
{
	const struct kf_cli_cmd *cmd;
	size_t i;

	if (!c->input) {
		kf_cli_overview(stdout);
		return KF_CLI_OK;
	}
	cmd = kf_cli_cmd_find(c->input);
	if (!cmd) {
		fprintf(stderr, "kfold: help: no command '%s'; the commands:", c->input);
		for (i = 0; kf_cli_cmds[i].name; i++)
			fprintf(stderr, "%s %s", i ? "," : "", kf_cli_cmds[i].name);
		fputc('\n', stderr);
		return KF_CLI_USAGE;
	}
	kf_cli_usage(stdout, cmd);
	return KF_CLI_OK;
}
