/* disasm.c - capstone behind disasm.h, loaded with dlopen on first use. */
#include "disasm.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>
#include <elf.h>

#include "error.h"
#include "util.h"

struct kf_disasm {
	csh h;
	cs_arch arch;
	bool is64;
	cs_insn *insn;             /* capstone's own buffer, reused */
};

static const char *const kind_names[KF_INSN_N_KINDS] = {
	[KF_INSN_PLAIN] = "plain", [KF_INSN_JUMP] = "jump", [KF_INSN_COND] = "cond",
	[KF_INSN_CALL] = "call", [KF_INSN_RET] = "return", [KF_INSN_TAILCALL] = "tailcall",
	[KF_INSN_IJUMP] = "indirect-jump", [KF_INSN_ICALL] = "indirect-call",
	[KF_INSN_TRAP] = "trap", [KF_INSN_BAD] = "bad",
};

const char *kf_insn_kind_name(enum kf_insn_kind k)
{
	return (unsigned)k < KF_INSN_N_KINDS ? kind_names[k] : "plain";
}

/* ---- capstone, resolved once ------------------------------------------------ */

/* Debian 12's soname (libcapstone4): capstone 5 changed the API, so
 * another major version is not tried. */
#define CS_SONAME "libcapstone.so.4"

/* Each pointer has the type of capstone.h's own prototype (__typeof__
 * names the declaration without referring to the symbol), so a call
 * through it is checked as a direct call would be. */
static struct {
	__typeof__(cs_open) *open;
	__typeof__(cs_option) *option;
	__typeof__(cs_malloc) *malloc;
	__typeof__(cs_disasm_iter) *disasm_iter;
	__typeof__(cs_insn_group) *insn_group;
	__typeof__(cs_free) *free;
	__typeof__(cs_close) *close;
	bool ok;
	char why[512];             /* when !ok */
} cs;
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;

#define RESOLVE(h, f) kf_dlsym(h, "cs_" #f, &cs.f, sizeof(cs.f))

static void cs_load(void)
{
	const char *e;
	void *h;

	/* never closed: the handles and buffers live as long as the process */
	h = dlopen(CS_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (h && RESOLVE(h, open) && RESOLVE(h, option) && RESOLVE(h, malloc) &&
	    RESOLVE(h, disasm_iter) && RESOLVE(h, insn_group) && RESOLVE(h, free) &&
	    RESOLVE(h, close)) {
		cs.ok = true;
		return;
	}
	e = dlerror();
	snprintf(cs.why, sizeof(cs.why), "kfold annotate needs libcapstone (Debian: "
		 "libcapstone4): cannot load " CS_SONAME ": %.300s",
		 e ? e : "a function is missing");
	if (h)
		dlclose(h);   /* the pointers resolved so far stay unused: !cs.ok */
}

int kf_disasm_load(char *err, size_t errlen)
{
	pthread_once(&cs_once, cs_load);
	if (cs.ok)
		return 0;
	if (err && errlen)
		snprintf(err, errlen, "%s", cs.why);
	return KF_EUNSUPP;
}

int kf_disasm_open(struct kf_disasm **out, uint16_t machine, bool intel)
{
	struct kf_disasm *d;
	cs_mode mode;
	cs_arch arch;

	*out = NULL;
	if (kf_disasm_load(NULL, 0))
		return KF_EUNSUPP;
	switch (machine) {
	case EM_X86_64: arch = CS_ARCH_X86; mode = CS_MODE_64; break;
	case EM_386: arch = CS_ARCH_X86; mode = CS_MODE_32; break;
	case EM_AARCH64: arch = CS_ARCH_ARM64; mode = CS_MODE_ARM; break;
	default: return KF_EUNSUPP;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return KF_ENOMEM;
	d->arch = arch;
	d->is64 = mode == CS_MODE_64;
	if (cs.open(arch, mode, &d->h) != CS_ERR_OK) {
		free(d);
		return KF_ENOMEM;
	}
	cs.option(d->h, CS_OPT_DETAIL, CS_OPT_ON);
	/* AT&T is what objdump and perf annotate print by default */
	if (arch == CS_ARCH_X86)
		cs.option(d->h, CS_OPT_SYNTAX, intel ? CS_OPT_SYNTAX_INTEL : CS_OPT_SYNTAX_ATT);
	d->insn = cs.malloc(d->h);
	if (!d->insn) {
		cs.close(&d->h);
		free(d);
		return KF_ENOMEM;
	}
	*out = d;
	return 0;
}

void kf_disasm_close(struct kf_disasm *d)
{
	if (!d)
		return;
	cs.free(d->insn, 1);
	cs.close(&d->h);
	free(d);
}

static void classify_x86(const struct kf_disasm *d, const cs_insn *in, struct kf_insn *o)
{
	const cs_x86 *x = &in->detail->x86;
	uint8_t i;
	bool jump = cs.insn_group(d->h, in, CS_GRP_JUMP);
	bool call = cs.insn_group(d->h, in, CS_GRP_CALL);
	bool direct = x->op_count >= 1 && x->operands[0].type == X86_OP_IMM;

	if (in->id != X86_INS_LEA && in->id != X86_INS_NOP) {
		for (i = 0; i < x->op_count; i++)
			if (x->operands[i].type == X86_OP_MEM &&
			    (x->operands[i].access & CS_AC_READ))
				o->reads_mem = true;
	}
	if (cs.insn_group(d->h, in, CS_GRP_RET) || cs.insn_group(d->h, in, CS_GRP_IRET)) {
		o->kind = KF_INSN_RET;
	} else if (call) {
		o->kind = direct ? KF_INSN_CALL : KF_INSN_ICALL;
	} else if (jump) {
		if (!direct)
			o->kind = KF_INSN_IJUMP;
		else if (in->id == X86_INS_JMP || in->id == X86_INS_LJMP)
			o->kind = KF_INSN_JUMP;
		else
			o->kind = KF_INSN_COND;   /* jcc, jrcxz, loop */
	} else if (cs.insn_group(d->h, in, CS_GRP_INT) || in->id == X86_INS_UD2 ||
		   in->id == X86_INS_HLT || in->id == X86_INS_SYSCALL ||
		   in->id == X86_INS_SYSENTER) {
		o->kind = KF_INSN_TRAP;
	}
	if ((call || jump) && direct) {
		o->has_target = true;
		o->target = (uint64_t)x->operands[0].imm;
	}
}

static void classify_arm64(const cs_insn *in, struct kf_insn *o)
{
	const cs_arm64 *a = &in->detail->arm64;
	uint8_t i;

	for (i = 0; i < a->op_count; i++) {
		if (a->operands[i].type == ARM64_OP_IMM &&
		    (in->id == ARM64_INS_B || in->id == ARM64_INS_BL ||
		     in->id == ARM64_INS_CBZ || in->id == ARM64_INS_CBNZ ||
		     in->id == ARM64_INS_TBZ || in->id == ARM64_INS_TBNZ)) {
			o->has_target = true;
			o->target = (uint64_t)a->operands[i].imm;
		}
		if (a->operands[i].type == ARM64_OP_MEM && strncmp(in->mnemonic, "ld", 2) == 0)
			o->reads_mem = true;
	}
	switch (in->id) {
	case ARM64_INS_B:
		o->kind = a->cc != ARM64_CC_INVALID && a->cc != ARM64_CC_AL ?
			  KF_INSN_COND : KF_INSN_JUMP;
		break;
	case ARM64_INS_CBZ: case ARM64_INS_CBNZ: case ARM64_INS_TBZ: case ARM64_INS_TBNZ:
		o->kind = KF_INSN_COND;
		break;
	case ARM64_INS_BL: o->kind = KF_INSN_CALL; break;
	case ARM64_INS_BLR: o->kind = KF_INSN_ICALL; break;
	case ARM64_INS_BR: o->kind = KF_INSN_IJUMP; break;
	case ARM64_INS_RET: o->kind = KF_INSN_RET; break;
	case ARM64_INS_SVC: case ARM64_INS_BRK: case ARM64_INS_HLT: o->kind = KF_INSN_TRAP; break;
	default: break;
	}
}

/* The length of a VEX (c4, c5) or EVEX (62) instruction at p, legacy
 * prefixes included, or 0 when p holds none (or it runs past len).
 * capstone 4.0.2 cannot decode some AVX-512 instructions (the mask ones,
 * vptestnmb, vpcmpeqb with a mask) that glibc's string functions use;
 * their length keeps the instructions after them where objdump puts them.
 * These encodings are regular: after the prefix bytes come the opcode, a
 * ModRM (but for vzeroupper/vzeroall), maybe a SIB and a displacement,
 * and an imm8 for map 0F3A and a few map 0F opcodes. */
static size_t vex_length(const uint8_t *p, size_t len, bool is64)
{
	size_t i = 0, n;
	unsigned map, op, modrm, mod, rm;

	while (i < len && i < 4 && (p[i] == 0x66 || p[i] == 0x67 || p[i] == 0xf2 ||
				    p[i] == 0xf3 || p[i] == 0xf0 || p[i] == 0x2e ||
				    p[i] == 0x36 || p[i] == 0x3e || p[i] == 0x26 ||
				    p[i] == 0x64 || p[i] == 0x65))
		i++;
	if (i + 2 >= len)
		return 0;
	/* outside 64-bit mode these bytes are LES, LDS and BOUND unless the
	 * next byte's mod is 3 */
	if (!is64 && (p[i + 1] & 0xc0) != 0xc0)
		return 0;
	switch (p[i]) {
	case 0xc5: map = 1; n = 2; break;
	case 0xc4: map = p[i + 1] & 0x1f; n = 3; break;
	case 0x62: if (!is64) return 0; map = p[i + 1] & 0x07; n = 4; break;
	default: return 0;
	}
	i += n;
	if (i >= len || map < 1 || map > 7)
		return 0;
	op = p[i++];
	if (map == 1 && op == 0x77)
		return i;             /* vzeroupper, vzeroall */
	if (i >= len)
		return 0;
	modrm = p[i++];
	mod = modrm >> 6;
	rm = modrm & 7;
	if (mod != 3 && rm == 4) {
		if (i >= len)
			return 0;
		if (mod == 0 && (p[i] & 7) == 5)
			i += 4;
		i++;
	}
	if (mod == 1)
		i += 1;
	else if (mod == 2 || (mod == 0 && rm == 5))
		i += 4;
	if (map == 3 || (map == 1 && ((op >= 0x70 && op <= 0x73) || op == 0xc2 ||
				      op == 0xc4 || op == 0xc5 || op == 0xc6)))
		i += 1;
	return i <= len && i <= 15 ? i : 0;
}

int kf_disasm_run(struct kf_disasm *d, const uint8_t *code, size_t len, uint64_t addr,
		  struct kf_insn **out, size_t *np, size_t *cap)
{
	size_t n = *np;

	while (len) {
		const uint8_t *p = code;
		size_t left = len;
		uint64_t a = addr;
		struct kf_insn *o;
		size_t vl;

		KF_WORK(1);
		if (!KF_GROW(*out, *cap, n + 1)) {
			*np = n;
			return KF_ENOMEM;
		}
		o = &(*out)[n++];
		memset(o, 0, sizeof(*o));
		o->addr = addr;
		if (cs.disasm_iter(d->h, &p, &left, &a, d->insn) && d->insn->size) {
			const cs_insn *in = d->insn;

			o->size = (uint8_t)(in->size > KF_INSN_MAX_BYTES ? KF_INSN_MAX_BYTES : in->size);
			memcpy(o->bytes, code, o->size);
			if (in->op_str[0])
				snprintf(o->text, sizeof(o->text), "%.31s %.120s", in->mnemonic, in->op_str);
			else
				snprintf(o->text, sizeof(o->text), "%.31s", in->mnemonic);
			if (d->arch == CS_ARCH_X86)
				classify_x86(d, in, o);
			else
				classify_arm64(in, o);
		} else if (d->arch == CS_ARCH_X86 && (vl = vex_length(code, len, d->is64)) != 0) {
			size_t k;
			int w;

			o->size = (uint8_t)vl;
			memcpy(o->bytes, code, vl);
			w = snprintf(o->text, sizeof(o->text), ".byte ");
			for (k = 0; k < vl && w > 0 && (size_t)w < sizeof(o->text); k++)
				w += snprintf(o->text + w, sizeof(o->text) - (size_t)w, "%s0x%02x",
					      k ? "," : "", code[k]);
			if (w > 0 && (size_t)w < sizeof(o->text))
				snprintf(o->text + w, sizeof(o->text) - (size_t)w,
					 " (VEX/EVEX, not decoded)");
		} else {
			/* not an instruction: one byte, and go on after it */
			o->size = 1;
			o->bytes[0] = code[0];
			o->kind = KF_INSN_BAD;
			snprintf(o->text, sizeof(o->text), ".byte 0x%02x", code[0]);
		}
		if (o->size > len)
			o->size = (uint8_t)len;
		code += o->size;
		len -= o->size;
		addr += o->size;
	}
	*np = n;
	return 0;
}
