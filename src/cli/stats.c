/* stats.c - the --stats text: what was read, and for each module where
 * its names and debug info came from or what would give them, on stderr.
 * Moved from main.c with its text unchanged; reads the session through
 * kfold.h only.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void print_counts(const kf_stats *st)
{
	fprintf(stderr,
		"kfold: records %" PRIu64 ", samples %" PRIu64 " (folded %" PRIu64
		", undecodable %" PRIu64 ", unknown id %" PRIu64 "), stacks %" PRIu64 "\n"
		"kfold: lost events %" PRIu64 ", lost samples %" PRIu64
		", throttled %" PRIu64 ", out of order %" PRIu64
		", unknown records %" PRIu64 "\n"
		"kfold: bytes read %" PRIu64 ", ordering queue peak %zu bytes, "
		"work %" PRIu64 " steps%s%s\n",
		st->records, st->samples, st->samples_folded, st->samples_bad,
		st->samples_unknown_id, st->stacks, st->lost_events, st->lost_samples,
		st->throttles, st->out_of_order, st->unknown_records, st->bytes,
		st->queue_peak_bytes, st->work, st->input_cut ? ", input cut short" : "",
		st->input_damaged ? ", input damaged" : "");
	if (st->samples_filtered)
		fprintf(stderr, "kfold: samples left out by the filters %" PRIu64 "\n",
			st->samples_filtered);
	if (st->offcpu_weighed || st->offcpu_unmatched || st->offcpu_dead ||
	    st->offcpu_idle || st->offcpu_unreadable || st->offcpu_switch_ins)
		fprintf(stderr, "kfold: off-CPU: %" PRIu64 " switch-outs weighed, %" PRIu64
			".%09" PRIu64 " s (%" PRIu64 " still off at the end, weighed to "
			"the last sample); not weighed: %" PRIu64 " with no switch-in "
			"seen, %" PRIu64 " exiting, %" PRIu64 " of the idle task, %" PRIu64
			" unreadable; %" PRIu64 " switch-ins seen\n", st->offcpu_weighed,
			st->offcpu_ns / 1000000000u, st->offcpu_ns % 1000000000u,
			st->offcpu_at_end, st->offcpu_unmatched, st->offcpu_dead,
			st->offcpu_idle, st->offcpu_unreadable, st->offcpu_switch_ins);
	if (st->offcpu_renamed)
		fprintf(stderr, "kfold: off-CPU: %" PRIu64 " switch-outs sampled with tid -1 "
			"(a thread on its way out) folded as the thread prev_pid names\n",
			st->offcpu_renamed);
	if (st->offcpu_woken)
		fprintf(stderr, "kfold: off-CPU: %" PRIu64 " waits ended by a recorded "
			"wakeup\n", st->offcpu_woken);
}

void kf_cli_print_stats(const struct kf_cli *c, kf_session *s)
{
	size_t i, n = kf_session_n_modules(s);
	const char *done = getenv("KFOLD_HUGEPAGES_DONE");

	print_counts(kf_session_stats(s));
	if (done && getenv("GLIBC_TUNABLES")) {
		/* done: "1", or why on a machine that reports its free pages */
		bool why = strcmp(done, "1") != 0;

		fprintf(stderr, "kfold: memory: started again with GLIBC_TUNABLES=%s "
			"(huge pages for malloc%s%s; KFOLD_HUGEPAGES=never: not)\n",
			getenv("GLIBC_TUNABLES"), why ? ": " : "", why ? done : "");
	}
	else if (kf_cli_huge_pages_note())
		fprintf(stderr, "kfold: memory: %s\n", kf_cli_huge_pages_note());
	for (i = 0; i < n; i++) {
		kf_module_info mi;
		const char *adv;

		if (kf_session_module(s, i, &mi) != 0)
			continue;
		fprintf(stderr, "kfold: module %s%s%s: %s%s%s\n", mi.name,
			mi.build_id[0] ? " build-id " : "", mi.build_id,
			mi.status, !mi.file ? "" : mi.file_debuginfod ?
			", from debuginfod, cached at " : ", from ",
			mi.file ? mi.file : "");
		if (mi.minidebuginfo)
			fprintf(stderr, "kfold:   %s\n", mi.minidebuginfo);
		if (mi.debuginfo)
			fprintf(stderr, "kfold:   debug info (inline frames, lines) "
				"from %s%s\n", mi.debuginfo_debuginfod ?
				"debuginfod, cached at " : "", mi.debuginfo);
		else if ((adv = kf_session_debuginfo_advice(s, i)))
			fprintf(stderr, "kfold:   no debug info: no inline frames or "
				"lines; %s\n", adv);
	}
	{
		uint64_t fps, fpb;

		kf_session_fp_chains(s, &fps, &fpb);
		if (fpb)
			fprintf(stderr, "kfold: frame-pointer stacks: %" PRIu64
				" samples, %" PRIu64 " stop before the program's "
				"entry; the chain broke in (%s):\n",
				fps, fpb, kf_fp_break_hint());
		n = kf_session_n_fp_breaks(s);
		for (i = 0; i < n; i++) {
			kf_fp_break b;

			if (kf_session_fp_break(s, i, &b) == 0)
				fprintf(stderr, "kfold: %10" PRIu64 "  %s\n",
					b.samples, b.module);
		}
	}
	if (kf_session_stats(s)->lbr_samples) {
		const kf_stats *st = kf_session_stats(s);

		fprintf(stderr, "kfold: LBR call stacks: %" PRIu64 " samples", st->lbr_samples);
		if (st->lbr_depth)
			fprintf(stderr, ", %" PRIu64 " as deep as the LBR (%" PRIu32
				" entries: their outer callers are lost)", st->lbr_full,
				st->lbr_depth);
		else
			fprintf(stderr, " (the LBR's depth is not recorded: a full one "
				"cannot be told)");
		if (st->lbr_empty)
			fprintf(stderr, ", %" PRIu64 " without branch records (the "
				"sampled pc alone)", st->lbr_empty);
		fputc('\n', stderr);
		if (c->o.stitch_lbr)
			fprintf(stderr, "kfold: --stitch-lbr: %" PRIu64 " samples completed "
				"from their thread's previous one (%" PRIu64 " frames)%s\n",
				st->lbr_stitched, st->lbr_stitched_frames,
				st->lbr_depth ? "" : "; nothing can be: the LBR's depth is "
				"not recorded");
		if (st->lbr_stopped)
			fprintf(stderr, "kfold: LBR stacks that stopped:\nkfold: %10" PRIu64
				"  lbr_full: %s\n", st->lbr_stopped, kf_lbr_full_hint());
	}
	n = kf_session_n_unwind_stops(s);
	if (n)
		fprintf(stderr, "kfold: user stacks unwound: %" PRIu64
			" samples, %" PRIu64 " frames guessed; where they ended:\n",
			kf_session_stats(s)->samples_unwound,
			kf_session_stats(s)->frames_guessed);
	for (i = 0; i < n; i++) {
		kf_unwind_stop us;

		if (kf_session_unwind_stop(s, i, &us) != 0)
			continue;
		fprintf(stderr, "kfold: %10" PRIu64 "  %s%s%s%s%s\n", us.samples,
			us.reason, us.module[0] ? " in " : "", us.module,
			us.hint[0] ? ": " : "", us.hint);
	}
	/* the table above is of the unwinds as they ended; --stitch went on */
	if (c->o.stitch)
		fprintf(stderr, "kfold: --stitch: %" PRIu64 " samples ran out of the "
			"stack copy, %" PRIu64 " completed from earlier samples (%"
			PRIu64 " frames), %" PRIu64 " still cut\n",
			kf_session_stats(s)->stitch_cut, kf_session_stats(s)->stitch_samples,
			kf_session_stats(s)->stitch_frames,
			kf_session_stats(s)->stitch_still_cut);
}
