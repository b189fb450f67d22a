/* cmd-help.c - `kfold help [COMMAND]`: the usage of kfold, or of one
 * command (the same text as `kfold COMMAND --help`), on stdout.
 */
#include "cli.h"

const struct cli_group *const cli_help_groups[] = { &cli_basic_group, NULL };

int cli_help_run(struct cli *c)
{
	const struct cli_cmd *cmd;
	size_t i;

	if (!c->input) {
		cli_overview(stdout);
		return CLI_OK;
	}
	cmd = cli_cmd_find(c->input);
	if (!cmd) {
		fprintf(stderr, "kfold: help: no command '%s'; the commands:", c->input);
		for (i = 0; cli_cmds[i].name; i++)
			fprintf(stderr, "%s %s", i ? "," : "", cli_cmds[i].name);
		fputc('\n', stderr);
		return CLI_USAGE;
	}
	cli_usage(stdout, cmd);
	return CLI_OK;
}
