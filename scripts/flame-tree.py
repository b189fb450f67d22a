#!/usr/bin/env python3
"""flame-tree.py PAGE MODE [TERM]: the data of a `kfold flamegraph` page
(flame.c's write_tree: gzip, base64, "KFFG" version 2) decoded, for the
tests (src/tests/flamegraph.sh, diffgraph.sh).

MODE names:  the names, a line each;
     folded: the stacks it holds, as folded output prints them ("stack
             weight", byte order; folded output's rules for names);
     diff:   a difference's stacks as `kfold diff` prints them ("stack
             before after");
     expect: what the page's self-test must report (JSON): the widest
             process, the share of the frames matching TERM, the kinds,
             and a difference's before and after of the widest process.
"""
import base64, gzip, json, re, struct, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<script type="application/octet-stream" id="data">(.*?)</script>', page, re.S)
raw = gzip.decompress(base64.b64decode(m.group(1)))
magic, version, n, jlen = struct.unpack_from("<4sIII", raw)
assert magic == b"KFFG" and version == 2
d = json.loads(raw[16:16 + jlen])
off = (16 + jlen + 7) // 8 * 8
for key in ("pdelta", "name", "file", "line", "module"):
    d[key] = struct.unpack_from("<%dI" % n, raw, off)
    off += 4 * n
d["kind"] = list(raw[off:off + n])
off = (off + n + 7) // 8 * 8
# the weights of the m nodes that have any, by place
m = struct.unpack_from("<I", raw, off)[0]
at = struct.unpack_from("<%dI" % m, raw, off + 4)
off = (off + 4 + 4 * m + 7) // 8 * 8
def weights(k):
    dense = [0] * n
    for i, x in zip(at, struct.unpack_from("<%dd" % m, raw, off + 8 * m * k)):
        dense[i] = int(x)
    return dense
d["self"] = weights(0)
if d.get("diff"):
    d["a"] = weights(2)
    d["b"] = weights(3)
names = d["names"]
d["parent"] = [i - p for i, p in enumerate(d["pdelta"])]
n = len(d["parent"])
if sys.argv[2] == "names":
    print("\n".join(names))
elif sys.argv[2] in ("folded", "diff"):
    diff = sys.argv[2] == "diff"
    out = {}
    for i in range(1, n):
        if not (d["a"][i] or d["b"][i] if diff else d["self"][i]):
            continue
        path, j = [], i
        while j:
            path.append(names[d["name"][j]].replace(";", ":").replace('"', "").replace("'", ""))
            j = d["parent"][j]
        key = ";".join(reversed(path))
        if diff:
            # drawn in the after width, or the before width when gone
            assert d["self"][i] == (d["b"][i] or d["a"][i]), "node %d: self %d, before %d, after %d" % (
                i, d["self"][i], d["a"][i], d["b"][i])
        w = out.get(key, [0, 0, 0])
        out[key] = [w[0] + d["self"][i], w[1] + (d["a"][i] if diff else 0),
                    w[2] + (d["b"][i] if diff else 0)]
    for k in sorted(out, key=lambda k: k.encode()):
        if diff:
            print("%s %d %d" % (k, out[k][1], out[k][2]))
        else:
            print("%s %d" % (k, out[k][0]))
else:
    # what the self-test must report: the widest process, and the share
    # of the frames matching sys.argv[3]
    total = [0] * n
    for i in range(n - 1, -1, -1):
        total[i] += d["self"][i]
        if i:
            total[d["parent"][i]] += total[i]
    kids = [i for i in range(1, n) if d["parent"][i] == 0]
    widest = max(kids, key=lambda i: (total[i], -i))
    term = sys.argv[3]
    match = [i > 0 and term in names[d["name"][i]] for i in range(n)]
    share = 0
    for i in range(1, n):
        if not match[i]:
            continue
        j = d["parent"][i]
        while j and not match[j]:
            j = d["parent"][j]
        if j == 0:
            share += total[i]
    res = {"widest": names[d["name"][widest]], "widest_share": total[widest] / total[0],
           "matched": sum(match), "share": share / total[0], "total": total[0],
           "kinds": sorted(set(d["kind"]))}
    if d.get("diff"):
        # the widest process's subtree before and after
        def under(i, k):
            while k and k != i:
                k = d["parent"][k]
            return k == i
        res["before"] = sum(d["a"][k] for k in range(n) if under(widest, k))
        res["after"] = sum(d["b"][k] for k in range(n) if under(widest, k))
    print(json.dumps(res))
