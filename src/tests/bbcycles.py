#!/usr/bin/env python3
"""bbcycles.py BRSTACKSYM KFOLD-JSON: kfold annotate's cycles per basic
block (issue 17, part 1) against the records perf script prints.

perf annotate --stdio2 is perf's only text output of these columns, and
perf 6.1 crashes there (SIGSEGV) as soon as a record has cycles; perf
report's ipc_lbr column prints garbage on the same files.  So the
records come from `perf script -F event,brstacksym` (each FROM/TO as
symbol+offset, the cycles), and this script applies perf annotate's
rules (hist__account_cycles, symbol__account_cycles,
annotation__compute_ipc) to them by itself:
 - a sample counts only when its newest record has cycles; its records
   are taken oldest first, and a record without cycles counts for nothing;
 - a record ends a block at its FROM; the block starts at the TO of the
   record before it (older) when that lies in the same function, before
   the end; otherwise it has no start;
 - at each end: the records, their cycles, min and max (all of them);
 - of the records with a start, those of the earliest start (the longest
   block) make the block: its instructions (those that start in [start,
   end], from kfold's own disassembly, which annotate.sh checks against
   perf's objdump), records, cycles, and IPC = instructions / (cycles /
   records); from the last end down, each instruction takes the IPC of
   the first block that covers it.
Functions are named by symbol alone (perf script prints no file), so a
name two functions share is left out.  Exit 0 equal, 1 a difference.
"""
import collections, json, sys
# perf script -F brstacksym: per sample, records newest first, each
# FROM/TO/M-or-P-or--/in_tx/abort/cycles/type with FROM and TO as sym+0xoff
def site(t):
    if t.startswith('[unknown]') or '+0x' not in t:
        return None
    name, off = t.rsplit('+0x', 1)
    return name, int(off, 16)
ends = collections.defaultdict(lambda: collections.defaultdict(list))  # fn -> end off -> [(start, cyc)]
kf = json.load(open(sys.argv[2]))
n_samples = 0
no_start = [0]
shorter = 0
# perf script -F event,brstacksym: "EVENT: records"; kfold counts the
# records of the annotated event's samples
for line in open(sys.argv[1]):
    ev, _, line = line.partition(':')
    if ev.strip() != kf['event']:
        continue
    recs = []
    for r in line.split():
        f = r.split('/')
        if len(f) >= 7:
            recs.append((site(f[0]), site(f[1]), int(f[5])))
    if not recs or recs[0][2] == 0:
        continue
    n_samples += 1
    for i in range(len(recs) - 1, -1, -1):
        frm, _, cyc = recs[i]
        if not cyc or frm is None:
            continue
        start = None
        if i + 1 < len(recs):
            to = recs[i + 1][1]
            if to is not None and to[0] == frm[0] and to[1] < frm[1]:
                start = to[1]
            else:
                no_start[0] += 1
        ends[frm[0]][frm[1]].append((start, cyc))
bad = 0
compared = recs_cmp = blocks_cmp = ipc_insns = 0
total = sum(len(v) for e in ends.values() for v in e.values())
# perf script names a site by symbol alone: a name two functions share
# (forkexec's two mains) is left out
names = collections.Counter(f['symbol'] for f in kf['functions'])
for f in kf['functions']:
    name = f['symbol']
    if names[name] > 1:
        continue
    if name not in ends:
        if 'block_cycles' in f:
            print('  kfold only:', name); bad += 1
        continue
    compared += 1
    start = int(f['start'], 16)
    offs = [int(i['addr'], 16) - start for i in f['instructions'] if i['size']]
    want_end = {}
    want_ipc = {}
    want_blocks = []
    for off in sorted(ends[name], reverse=True):
        rs = ends[name][off]
        cyc = [c for _, c in rs]
        want_end[off] = (len(rs), sum(cyc), min(cyc), max(cyc))
        starts = [s for s, _ in rs if s is not None]
        if not starts:
            continue
        s0 = min(starts)
        sel = [c for s, c in rs if s == s0]
        shorter += len(starts) - len(sel)
        n_insn = sum(1 for o in offs if s0 <= o <= off)
        if not n_insn:
            continue
        ipc = n_insn / (sum(sel) / len(sel))
        want_blocks.append((s0, off, n_insn, len(sel), sum(sel), round(ipc, 2)))
        for o in offs:
            if s0 <= o <= off and o not in want_ipc:
                want_ipc[o] = round(ipc, 2)
    got_end = {}
    got_ipc = {}
    for i in f['instructions']:
        o = int(i['addr'], 16) - start
        if 'block_cycles' in i:
            b = i['block_cycles']
            got_end[o] = (b['records'], b['cycles'], b['min'], b['max'])
        if 'ipc' in i:
            got_ipc[o] = i['ipc']
    bc = f.get('block_cycles', {'blocks': [], 'records': 0})
    got_blocks = [(int(b['start'], 16) - start, int(b['end'], 16) - start, b['instructions'],
                   b['records'], b['cycles'], b['ipc']) for b in bc['blocks']]
    # an end inside an instruction has no column (perf's neither)
    want_shown = {o: v for o, v in want_end.items() if o in offs}
    recs_cmp += bc['records']
    ok = got_end == want_shown
    ok = ok and bc['records'] == sum(v[0] for v in want_end.values())
    ok = ok and sorted(got_blocks) == sorted(want_blocks)
    ok = ok and all(abs(got_ipc.get(o, 0) - v) < 0.006 for o, v in want_ipc.items()) \
        and set(got_ipc) == set(want_ipc)
    blocks_cmp += len(got_blocks)
    ipc_insns += len(got_ipc)
    if not ok:
        bad += 1
        print('  differs:', name)
        print('    ends  want', sorted(want_shown.items())[:4], 'got', sorted(got_end.items())[:4])
        print('    blocks want', sorted(want_blocks)[:3], 'got', sorted(got_blocks)[:3])
print('%s 5. cycles per block: %d functions, %d of %d records (%d with a start in another '
      'function or past the end, %d of a shorter block), %d blocks, %d instructions with an '
      'IPC, as perf script -F brstacksym gives them' %
      ('ok  ' if not bad and compared and blocks_cmp else 'FAIL', compared, recs_cmp, total,
       no_start[0], shorter, blocks_cmp, ipc_insns))
sys.exit(1 if bad or not compared or not blocks_cmp else 0)
