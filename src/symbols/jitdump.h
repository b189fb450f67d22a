/* jitdump.h - reading a jitdump file (jit-PID.dump), the format JIT
 * runtimes write for perf (JVM agents, V8/Node --perf-prof, .NET,
 * LuaJIT): a header, then records of code loaded (name, address, bytes),
 * moved, described by source lines or unwinding tables, and closed.
 *
 * Layout (perf's tools/perf/Documentation/jitdump-specification.txt;
 * integers in the writer's byte order, which the magic tells):
 *   header  u32 magic 0x4A695444 ("JiTD"), u32 version (1), u32 total_size
 *           (of the header), u32 elf_mach, u32 pad1, u32 pid,
 *           u64 timestamp, u64 flags (bit 0: timestamps are the CPU's
 *           time stamp counter, not a clock)
 *   record  u32 id, u32 total_size (of the record), u64 timestamp, then
 *     0 CODE_LOAD       u32 pid, tid; u64 vma, code_addr, code_size,
 *                       code_index; the name, NUL-terminated; code_size
 *                       bytes of code
 *     1 CODE_MOVE       u32 pid, tid; u64 vma, old_code_addr,
 *                       new_code_addr, code_size, code_index
 *     2 CODE_DEBUG_INFO u64 code_addr, nr_entry; nr_entry times {u64 addr;
 *                       i32 line, discriminator; the file name,
 *                       NUL-terminated, or "\xff" for the previous one's}
 *     3 CODE_CLOSE
 *     4 CODE_UNWINDING_INFO u64 unwinding_size, eh_frame_hdr_size,
 *                       mapped_size; unwinding_size bytes (.eh_frame then
 *                       .eh_frame_hdr), for the next CODE_LOAD
 *   Unknown record ids are skipped by their size.
 *
 * The parser never trusts a size: a record that does not fit the file or
 * its own size ends the reading there, with the offset and what was
 * wrong; what came before it is kept (a JIT still writing the file, a
 * copy cut short).  Memory is bounded by the file's size.
 *
 * May use: util.
 */
#ifndef KF_JITDUMP_H
#define KF_JITDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KF_JIT_MAGIC 0x4A695444u
#define KF_JIT_FLAG_ARCH_TIMESTAMP 1u

enum kf_jit_rec {
	KF_JIT_CODE_LOAD = 0,
	KF_JIT_CODE_MOVE = 1,
	KF_JIT_CODE_DEBUG_INFO = 2,
	KF_JIT_CODE_CLOSE = 3,
	KF_JIT_CODE_UNWINDING_INFO = 4,
};

/* A source line of jitted code. */
struct kf_jit_line {
	uint64_t addr;
	int32_t line, discrim;
	const char *file;         /* into the file's bytes; NUL-terminated */
};

/* Code loaded (or, for a move, loaded again at new_addr: the same name and
 * bytes as the load it moves). */
struct kf_jit_code {
	uint64_t time;            /* the record's timestamp */
	uint32_t pid, tid;
	uint64_t addr, size, index;
	const char *name;         /* into the file's bytes; NUL-terminated */
	const uint8_t *code;      /* size bytes, NULL for a move whose load
				     is not in the file */
	size_t first_line, n_lines;  /* its DEBUG_INFO lines, in `lines` */
	uint64_t lines_base;      /* the address the lines' addresses count
				     from: the load's (a move keeps it) */
	const uint8_t *unwind;    /* its UNWINDING_INFO (.eh_frame and
				     .eh_frame_hdr), NULL: none */
	uint64_t unwind_size, eh_frame_hdr_size, mapped_size;
	bool moved;               /* a CODE_MOVE made it */
};

struct kf_jitdump {
	bool swapped;             /* written in the other byte order */
	uint32_t version, elf_mach, pid;
	uint64_t timestamp, flags;
	struct kf_jit_code *code; /* in file order */
	size_t n_code, cap_code;
	struct kf_jit_line *lines;
	size_t n_lines, cap_lines;
	uint64_t closed_at;       /* CODE_CLOSE's timestamp, 0: none */
	size_t n_records, n_unknown;
	/* the reading stopped at this offset (0: it read to the end) */
	size_t bad_offset;
	char why[160];
};

/* Reads a jitdump of len bytes at buf (which must stay valid while out is
 * used: names and code point into it).  Returns 0 (out->bad_offset set
 * when part of it could not be read), KF_EFORMAT when not even the header
 * is readable (out->why says why), KF_ENOMEM. */
int kf_jitdump_parse(const uint8_t *buf, size_t len, struct kf_jitdump *out);
void kf_jitdump_fini(struct kf_jitdump *j);

/* An ELF image (in j's byte order, the class of its machine) whose one
 * section, .eh_frame, holds e's unwinding table at the runtime address
 * perf inject --jit gives it: after the code, at the next 8-byte
 * boundary.  libdw reads it with elf_memory and dwarf_getcfi_elf.
 * Returns 0 (*out: the image, to free; *len its size), 1 when e has no
 * table that fits, KF_ENOMEM. */
int kf_jit_table_image(const struct kf_jitdump *j, const struct kf_jit_code *e, uint8_t **out,
		       size_t *len);

#endif
