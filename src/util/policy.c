/* policy.c - the two policies (policy.h).
 *
 * Constant tables: a stage holds a pointer to one for the whole run, and
 * nothing writes them, so sessions on several threads share them.
 */
#include "policy.h"

static const struct kf_policy kfold_policy = { 0 };

static const struct kf_policy perf_policy = {
	.perf_output = true,

	.drop_chainless_samples = true,
	.perf_script_header = true,
	.tracepoint_comm_only = true,
	.drop_guest_samples = true,
	.read_values_per_id = true,
	.symfs_moves_buildid_dir = true,

	.discard_chain_on_unknown_marker = true,
	.keep_trailing_zero_frame = true,
	.unwind_x86_64_only = true,
	.unwind_store_ra_minus_one = true,
	.stack_end_unknown_frame = true,
	.unwind_zero_ra_frame = true,

	.stack_last_word_unread = true,
	.unwind_empty_copy_no_frames = true,
	.cfi_eh_frame_only = true,
	.libunwind_fp_step = true,
	.no_leaf_ra_guess = true,
	.libunwind_plt_step = true,
	.fp_step_needs_eh_frame = true,
	.unwind_stops_at_jit = true,
	.cfi_lowest_load_address = true,

	.perf_names = true,
	.addr2line_emulation = true,
	.perf_script_line_text = true,

	.no_debuginfod = true,
	.no_minidebuginfo = true,
	.vdso_own_unchecked = true,
	.no_file_checks = true,
	.a2l_dwz_host_only = true,
	.path_must_exist_on_host = true,
};

const struct kf_policy *kf_policy_kfold(void)
{
	return &kfold_policy;
}

const struct kf_policy *kf_policy_perf(void)
{
	return &perf_policy;
}
