/* policy.h - where kfold's own mode and `--compat=perf` part ways,
 * chosen once.
 *
 * kfold has two products that share every stage: its own output, and
 * exactly what `perf script | stackcollapse-perf.pl` gives with perf 6.1
 * (--compat=perf).  Each behaviour in which they differ is one named
 * field here, and a stage tests the field, never "is this compat mode":
 * so what --compat=perf changes is read in one place, and a stage's code
 * says which behaviour a branch is about.  A field is true where perf
 * 6.1 behaves so; kfold's own mode has every field false.  Each names the
 * correction of README's "where kfold differs from perf" list it undoes
 * (N), or the rule of docs/perf-compat.md it follows ([X9]) where the
 * difference is not one the README lists.
 *
 * The session picks one of the two policies when it is made
 * (kf_session_new, from kf_options.compat) and hands the same pointer to
 * every stage's init; stages keep it borrowed.  Options that are not
 * the compat mode (--inline, --srcline, ...) are not in here: a stage
 * combines them with the policy where both matter.
 *
 * May use: nothing.  Ownership: the two policies are constant tables
 * with static lifetime; nobody frees or writes them.
 */
#ifndef KF_POLICY_H
#define KF_POLICY_H

#include <stdbool.h>

struct kf_policy {
	/* ---- what is wanted: perf's output, not kfold's ---- */
	bool perf_output;               /* the run reproduces perf's text:
					   kfold's own reports (--context,
					   --exclude, JSON, --explain) and
					   their hints do not apply */

	/* ---- reading samples (session) ---- */
	bool drop_chainless_samples;    /* 4: a sample without a callchain
					   folds to nothing */
	bool perf_script_header;        /* [F1, F3, S1]: comm, period and
					   event are what stackcollapse's
					   regexes take from the header line
					   perf script prints */
	bool tracepoint_comm_only;      /* 20 [F9]: a tracepoint sample
					   read from a pipe folds to its
					   comm alone */
	bool drop_guest_samples;        /* perf script's perf_guest is off:
					   guest samples are not printed */
	bool read_values_per_id;        /* 18: PERF_SAMPLE_READ values are
					   differenced per id, not per id
					   and thread */
	bool symfs_moves_buildid_dir;   /* [E2, W12]: --symfs replaces
					   --buildid-dir by SYMFS/.debug */

	/* ---- call chains (callchain.c) ---- */
	bool discard_chain_on_unknown_marker; /* 17 [C2, W9]: an unknown
					   context marker drops the whole
					   chain */
	bool keep_trailing_zero_frame;  /* 2: a user walk's trailing 0 is
					   a frame ([unknown]) */
	bool unwind_x86_64_only;        /* [U4]: only x86_64 samples of an
					   x86_64 capture are unwound */
	bool unwind_store_ra_minus_one; /* 1 [U1, U13]: an unwound return
					   address is stored as ra - 1 */
	bool stack_end_unknown_frame;   /* 10 [U5]: a stack cut by the end
					   of the copy ends in perf's
					   [unknown] (0 - 1), not
					   [truncated] */
	bool unwind_zero_ra_frame;      /* 10, 12 [U11]: a zero return
					   address is a frame (0 - 1) */

	/* ---- DWARF unwinding (unwind.c) ---- */
	bool stack_last_word_unread;    /* 10 [U9]: the stack copy's last
					   word is not read */
	bool unwind_empty_copy_no_frames; /* 10 [U12]: an empty stack copy
					   gives no user frame, not even the
					   sampled pc */
	bool cfi_eh_frame_only;         /* 12 [U2]: CFI from .eh_frame,
					   never .debug_frame */
	bool libunwind_fp_step;         /* 12 [U10]: libunwind's frame-
					   pointer step (16 KiB bound, CFA
					   moved two words, words past the
					   copy read as 0) */
	bool no_leaf_ra_guess;          /* 12 [U3]: a sampled frame without
					   CFI is not stepped through [sp] */
	bool libunwind_plt_step;        /* 12: libunwind's PLT rule before
					   the frame-pointer step */
	bool fp_step_needs_eh_frame;    /* 12 [U3]: frame pointers are
					   followed only in a file with an
					   .eh_frame */
	bool unwind_stops_at_jit;       /* 12 [U7]: JIT and anonymous code
					   end the unwind */
	bool cfi_lowest_load_address;   /* 19 [U8]: a file's load address
					   is the lowest start among the
					   process's mappings of it */

	/* ---- naming (symbolize.c, output/folded.c) ---- */
	bool perf_names;                /* 1, 7, 13, 21 [C4, E7]: frames
					   named as perf script names them:
					   the address as is, perf's tree
					   replayed (kf_symtab_find_perf),
					   no static .plt names, no DWARF
					   names of kfold's */
	bool addr2line_emulation;       /* [D3]: with --inline, DWARF-unwound
					   frames expanded through what perf's
					   `addr2line -i -f` child prints */
	bool perf_script_line_text;     /* 3, 5, 6, 14 [F2, S2]: a frame folds
					   as stackcollapse's regexes read
					   perf script's line for it, and
					   a comm keeps ';' and newlines */

	/* ---- finding symbol files (src/symbols) ---- */
	bool no_debuginfod;             /* 15: no debuginfod server is
					   asked */
	bool no_minidebuginfo;          /* 16: .gnu_debugdata is not read */
	bool vdso_own_unchecked;        /* 11 [U6]: this process's vdso
					   names a [vdso] without a recorded
					   build-id whatever the host, and
					   never one with a recorded
					   build-id */
	bool no_file_checks;            /* 8: a file without a recorded
					   build-id is used as it is: no
					   inode or layout checks */
	bool a2l_dwz_host_only;         /* [D3]: addr2line looks for a dwz
					   file on this machine only, so
					   under --symfs the file's DWARF is
					   unusable */
	bool path_must_exist_on_host;   /* [E1]: without a recorded
					   build-id a file is read only if
					   its path exists on the host */
};

/* The two policies: kfold's own mode (every field false) and perf
 * 6.1's.  Never NULL. */
const struct kf_policy *kf_policy_kfold(void);
const struct kf_policy *kf_policy_perf(void);

#endif
