/* disasm.h - machine code to instructions, with capstone.
 *
 * One handle per architecture and syntax, opened once and used for every
 * function of a run (capstone's setup is the costly part).  Bytes that do
 * not decode become one-byte ".byte 0x.." entries, so a function's
 * instructions always cover its bytes exactly and hostile code cannot
 * stop the listing or make it skip samples; a VEX or EVEX instruction
 * capstone 4 cannot decode (some AVX-512 ones) becomes one entry of its
 * real length, so the instructions after it stay where objdump has them.
 *
 * Knows x86-64, i386 and aarch64 (the architectures kfold unwinds);
 * another e_machine is refused with KF_EUNSUPP.
 *
 * capstone is not linked: libcapstone.so.4 is loaded with dlopen on first
 * use (once per process, thread-safe), so only `kfold annotate` needs it
 * installed (README "What kfold needs at run time").
 *
 * May use: util, capstone (only this file includes it, for its types and
 * prototypes; its functions are reached through dlsym).
 */
#ifndef KF_DISASM_H
#define KF_DISASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What an instruction does to the flow of control. */
enum kf_insn_kind {
	KF_INSN_PLAIN = 0,     /* falls through */
	KF_INSN_JUMP,          /* direct unconditional jump */
	KF_INSN_COND,          /* direct conditional branch */
	KF_INSN_CALL,          /* direct call */
	KF_INSN_RET,           /* return */
	KF_INSN_TAILCALL,      /* direct jump out of the function (set by the
				  caller, who knows the function's range) */
	KF_INSN_IJUMP,         /* indirect jump (a register or memory) */
	KF_INSN_ICALL,         /* indirect call */
	KF_INSN_TRAP,          /* syscall, int, ud2, hlt: leaves the flow */
	KF_INSN_BAD,           /* bytes that did not decode */
	KF_INSN_N_KINDS
};

/* "jump", "cond", ...: the JSON and text name of a kind. */
const char *kf_insn_kind_name(enum kf_insn_kind k);

#define KF_INSN_MAX_BYTES 16
#define KF_INSN_TEXT 160

struct kf_insn {
	uint64_t addr;
	uint8_t size;
	uint8_t kind;              /* enum kf_insn_kind */
	bool has_target;           /* a direct branch or call */
	bool reads_mem;            /* has a memory operand that is read (a
				      load: what a skidded sample may blame) */
	uint64_t target;
	uint8_t bytes[KF_INSN_MAX_BYTES];
	char text[KF_INSN_TEXT];   /* "mnemonic operands" */
};

struct kf_disasm;

/* Loads capstone if no call did yet: 0, or KF_EUNSUPP with "kfold
 * annotate needs libcapstone (Debian: libcapstone4): cannot load
 * libcapstone.so.4: <dlerror>" in err (if not NULL).  The answer is the
 * same for the rest of the process. */
int kf_disasm_load(char *err, size_t errlen);

/* Opens a disassembler for an ELF e_machine (EM_X86_64, EM_386,
 * EM_AARCH64); intel: Intel syntax on x86 instead of AT&T.  0,
 * KF_EUNSUPP (another machine, or capstone cannot be loaded:
 * kf_disasm_load says why), KF_ENOMEM. */
int kf_disasm_open(struct kf_disasm **out, uint16_t machine, bool intel);
void kf_disasm_close(struct kf_disasm *d);

/* Decodes code[0..len) as the instructions at addr..addr+len and appends
 * them to (*out)[0..*n) (grown as needed, *cap its capacity), so that the
 * pieces of one function (the sections it spans) make one array.  0, or
 * KF_ENOMEM. */
int kf_disasm_run(struct kf_disasm *d, const uint8_t *code, size_t len, uint64_t addr,
		  struct kf_insn **out, size_t *n, size_t *cap);

#endif
