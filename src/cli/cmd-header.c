/* cmd-header.c - `kfold header`: what the capture says about where it was
 * recorded, as `perf report --header-only` prints it; `kfold --header` is
 * its old form.  It reads no samples (KF_CLI_LOAD_HEADER), so it takes none
 * of the options about samples or frames; the options saying where files
 * are it takes and does not need, so that one set of them fits every
 * command.
 */
#include "cli.h"

const struct kf_cli_group *const kf_cli_header_groups[] = {
	&kf_cli_io_group, &kf_cli_find_group, &kf_cli_basic_group, NULL
};

int kf_cli_header_run(struct kf_cli *c)
{
	return kf_cli_run(c, KF_CLI_LOAD_HEADER, kf_session_write_header);
}
