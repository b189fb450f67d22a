#!/usr/bin/env python3
"""compare.py - compare kfold's user stacks with dwfl-unwind's.

usage: compare.py KFOLD.folded DWFL.folded

KFOLD.folded: kfold --samples --kernel --pid ... (root frame comm-PID,
kernel frames end in _[k] and are dropped here).
DWFL.folded: dwfl-unwind -f ... (root frame PID, user frames only).

Both sides are reduced, per pid, to a multiset of user stacks (root
first); kfold's [truncated] marker (stack copy ran out) is not a frame.
Frame names are normalized before comparing, because the two symbolizers
pick different names for one address, which is no unwinding difference:
dwfl's C++ names are demangled (c++filt, parameter list cut, as kfold
prints them); symbol versions (@@GLIBC_2.34), leading underscores and
glibc's __GI_/__libc_ prefixes are dropped, cfree = free, a trailing 64
is dropped (mmap64 = mmap).
Reported: samples and user frames on each side, the samples whose
stack depth has a partner of the same depth in the same process (depth
multiset), the samples whose normalized stack is found on the other
side, and for the rest the names found at the positions where a stack
differs from its closest same-depth partner.  Stacks with no user frame
(kernel threads) are left out.

usage: compare.py KFOLD.folded DWFL.folded [N name pairs to list]
"""
import collections
import re
import subprocess
import sys

VER = re.compile(r'@@?[A-Za-z0-9_.]+$')


DEMANGLED = {}


def demangle_all(names):
    """C++ names: libdwfl gives them mangled, kfold demangled (without
    parameter lists); c++filt, then the parameter list cut off"""
    names = sorted(n for n in names if n.startswith('_Z') and n not in DEMANGLED)
    if not names:
        return
    try:
        out = subprocess.run(['c++filt'], input='\n'.join(names) + '\n',
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return
    for n, dm in zip(names, out.split('\n')):
        DEMANGLED[n] = cut_params(dm)


def cut_params(s):
    depth = 0
    for i, ch in enumerate(s):
        if ch in '<':
            depth += 1
        elif ch == '>':
            depth -= 1
        elif ch == '(' and depth == 0 and i > 0:
            return s[:i]
    return s


def norm(f):
    """one spelling per glibc alias family: versions, leading underscores,
    __GI_ and __libc_ prefixes, cfree = free, mmap64 = mmap"""
    f = DEMANGLED.get(f, f)
    f = VER.sub('', f).lstrip('_')
    for pre in ('GI_', 'libc_'):
        if f.startswith(pre):
            f = f[len(pre):].lstrip('_')
    if f == 'cfree':
        f = 'free'
    if f.endswith('64') and not f.startswith('['):
        f = f[:-2]
    return f


def read(path, kfold):
    stacks = collections.defaultdict(collections.Counter)
    lines = [l.rstrip('\n') for l in open(path, encoding='utf-8', errors='replace')]
    if not kfold:
        demangle_all({f for l in lines for f in l.rpartition(' ')[0].split(';')})
    for line in lines:
        if not line:
            continue
        body, _, cnt = line.rpartition(' ')
        frames = body.split(';')
        root = frames[0]
        pid = root.rsplit('-', 1)[1] if kfold else root
        # kfold: kernel frames end in _[k]; [truncated] marks a stack
        # copy that ran out, it is no frame
        user = tuple(norm(f) for f in frames[1:]
                     if not (kfold and (f.endswith('_[k]') or f == '[truncated]')))
        if not user:
            continue
        stacks[pid][user] += int(cnt)
    return stacks


def main():
    k = read(sys.argv[1], True)
    d = read(sys.argv[2], False)
    tot = {'kfold': [0, 0], 'dwfl': [0, 0]}
    same_stack = same_depth = 0
    for name, side in (('kfold', k), ('dwfl', d)):
        for pid, c in side.items():
            for st, n in c.items():
                tot[name][0] += n
                tot[name][1] += n * len(st)
    for pid in set(k) | set(d):
        kc, dc = k.get(pid, collections.Counter()), d.get(pid, collections.Counter())
        same_stack += sum((kc & dc).values())
        kd, dd = collections.Counter(), collections.Counter()
        for st, n in kc.items():
            kd[len(st)] += n
        for st, n in dc.items():
            dd[len(st)] += n
        same_depth += sum((kd & dd).values())
    # pair each kfold-only stack with a dwfl-only stack of the same pid and
    # depth that differs in the fewest positions; list the name pairs at
    # the differing positions (unwinding differences would show up as
    # unpaired stacks or as long runs of differing names)
    pairs = collections.Counter()
    unpaired = 0
    for pid in set(k) | set(d):
        kc = k.get(pid, collections.Counter()) - d.get(pid, collections.Counter())
        dc = d.get(pid, collections.Counter()) - k.get(pid, collections.Counter())
        dl = [st for st, n in dc.items() for _ in range(n)]
        for ks, n in kc.items():
            for _ in range(n):
                cands = [ds for ds in dl if len(ds) == len(ks)]
                if not cands:
                    unpaired += 1
                    continue
                best = min(cands, key=lambda ds: sum(a != b for a, b in zip(ks, ds)))
                dl.remove(best)
                for a, b in zip(ks, best):
                    if a != b:
                        pairs[(a, b)] += 1
    print('kfold: %d samples with user frames, %d user frames' % tuple(tot['kfold']))
    print('dwfl : %d samples with user frames, %d user frames' % tuple(tot['dwfl']))
    print('same stack (normalized names): %d samples' % same_stack)
    print('same depth (per process multiset): %d samples' % same_depth)
    print('stacks that differ: %d, of which without a same-depth partner: %d'
          % (tot['kfold'][0] - same_stack, unpaired))
    if pairs:
        print('names at the differing positions (count, kfold <-> dwfl):')
        for (a, b), n in pairs.most_common(int(sys.argv[3]) if len(sys.argv) > 3 else 12):
            a = a if len(a) < 70 else a[:67] + '...'
            b = b if len(b) < 70 else b[:67] + '...'
            print('  %5d  %s <-> %s' % (n, a or "''", b or "''"))

if __name__ == '__main__':
    main()
