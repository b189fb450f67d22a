/* cmd-header.c - `kfold header`: what the capture says about where it was
 * recorded, as `perf report --header-only` prints it; `kfold --header` is
 * its old form.  It reads no samples (CLI_LOAD_HEADER), so it takes none
 * of the options about samples or frames; the options saying where files
 * are it takes and does not need, so that one set of them fits every
 * command.
 */
#include "cli.h"

const struct cli_group *const cli_header_groups[] = {
	&cli_io_group, &cli_find_group, &cli_basic_group, NULL
};

int cli_header_run(struct cli *c)
{
	return cli_run(c, CLI_LOAD_HEADER, kf_session_write_header);
}
