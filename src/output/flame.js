/* flame.js - the flame graph page of `kfold flamegraph` (output/flame.c
 * embeds it, with flame.css and the data, into one HTML file).
 *
 * The data (<script id="data" type="application/json">) is the tree of
 * frames kfold merged: per node its parent (node 0 is "all", parents come
 * before children; given as the distance back to it), name, kind, self
 * value and samples, and the module
 * and file:line where every frame merged into it agrees.  This draws it on a canvas: flame (root at
 * the bottom) or icicle, a reversed tree (callers of each leaf), click to
 * zoom, search by substring or /regex/, a status line for the frame under
 * the pointer.  Frames narrower than half a pixel are not drawn; the
 * status line says how many and what share they hold.
 *
 * A difference (kfold diff --format html; "diff" in the data) also has
 * each node's self weight before and after: the graph has the after
 * shape (a stack found only before keeps its before width) and a frame's
 * colour says how its subtree changed, red for growth and blue for
 * shrinkage, deeper the nearer to the largest change.
 *
 * ?selftest=1[&search=TEXT][&zoom=NAME][&reverse=1][&icicle=1] drives the
 * page as a person would (zoom, search) and writes what it then shows
 * into <pre id="selftest"> as JSON, for the browser test
 * (src/tests/flamegraph.sh); it also marks its stages on the console
 * ("kfold-selftest: drawn"), which scripts/bench.sh times.
 */
(function () {
	'use strict';
	var errors = [];
	window.addEventListener('error', function (e) { errors.push(String(e.message)); });

	var T0 = performance.now();
	/* the self-test's marks on the console: a browser's log gives them
	 * wall-clock times (a headless browser's virtual time stands still
	 * while a script runs) */
	var SELFTEST = /[?&]selftest=1(&|$)/.test(location.search);
	function mark(what) {
		if (SELFTEST)
			console.log('kfold-selftest: ' + what);
	}
	mark('script start');

	/* The data: the tree's bytes (flame.c's write_tree), gzip-compressed
	 * in base64; the browser decodes and inflates them natively. */
	function parse(buf) {
		var v = new DataView(buf), i, n, jlen, off, D;
		if (buf.byteLength < 16 || v.getUint32(0, true) !== 0x4746464b ||
		    v.getUint32(4, true) !== 2)
			throw new Error('not a kfold flame graph tree of version 2');
		n = v.getUint32(8, true);
		jlen = v.getUint32(12, true);
		D = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 16, jlen)));
		off = 16 + jlen;
		off += (8 - off % 8) % 8;
		function u32() {
			var a = new Uint32Array(buf, off, n);
			off += 4 * n;
			return a;
		}
		D.pdelta = u32();
		D.name = u32();
		D.file = u32();
		D.line = u32();
		D.module = u32();
		D.kind = new Uint8Array(buf, off, n);
		off += n;
		off += (8 - off % 8) % 8;
		/* the weights of the m nodes that have any, by place */
		var m = v.getUint32(off, true), at = new Uint32Array(buf, off + 4, m);
		off += 4 + 4 * m;
		off += (8 - off % 8) % 8;
		function weights() {
			var sparse = new Float64Array(buf, off, m), dense = new Float64Array(n), k;
			for (k = 0; k < m; k++)
				dense[at[k]] = sparse[k];
			off += 8 * m;
			return dense;
		}
		D.self = weights();
		D.samples = weights();
		if (D.diff) {
			D.a = weights();
			D.b = weights();
		}
		/* parents come as the distance back to them */
		D.parent = new Int32Array(n);
		for (i = 1; i < n; i++)
			D.parent[i] = i - D.pdelta[i];
		return D;
	}

	function fail(e) {
		errors.push(String(e));
		document.getElementById('status').textContent = 'cannot read the data: ' + e;
		document.getElementById('selftest').textContent = JSON.stringify({ errors: errors });
	}

	function load() {
		var gz, text, n, i;
		try {
			/* atob skips the line breaks; a data: URL of megabytes goes
			 * through the browser's URL machinery, several times slower */
			text = atob(document.getElementById('data').textContent);
			n = text.length;
			gz = new Uint8Array(n);
			for (i = 0; i < n; i++)
				gz[i] = text.charCodeAt(i);
		} catch (e) {
			fail(e);
			return;
		}
		text = null;
		mark('decoded');
		new Response(new Blob([gz]).stream().pipeThrough(new DecompressionStream('gzip')))
			.arrayBuffer().then(function (buf) {
				mark('inflated');
				start(parse(buf), performance.now());
			}).catch(fail);
	}

	function start(D, T1) {
		var ROW = 17, MINW = 0.5;
		var KIND = [
			/* label, legend text */
			['process', 'process or thread (the root)'],
			['user', 'user code'],
			['kernel: on behalf', 'kernel work on behalf of the task (syscalls, faults)'],
			['kernel: attributed', 'kernel work only attributed to the task (IRQs, softirqs)'],
			['kernel: idle', 'the idle task'],
			['kernel: kthread', "a kernel thread's own work"],
			['kernel', 'kernel work whose context is unknown'],
			['JIT', 'JIT code (perf map)'],
			['inlined', 'inlined function'],
			['unknown', 'unknown or broken frame'],
			['context', 'kernel context marker'],
			['frame', 'frame (the input names no kinds: neutral colours)']
		];

		function hash(s) {
			var h = 2166136261, i;
			for (i = 0; i < s.length; i++) {
				h ^= s.charCodeAt(i);
				h = Math.imul(h, 16777619);
			}
			return (h >>> 0) / 4294967296;
		}

		/* a difference: red for growth, blue for shrinkage, deeper the
		 * nearer to the largest change (square root: small changes still
		 * show); a frame found only before pale blue-grey */
		function diffColour(a, b, max) {
			var v = max > 0 ? (b - a) / max : 0, m = Math.min(1, Math.abs(v));
			if (b === 0 && a > 0)
				return 'hsl(215,20%,80%)';
			return 'hsl(' + (v < 0 ? 220 : 0) + ',' + (10 + 75 * Math.sqrt(m)) + '%,' +
				(90 - 34 * Math.sqrt(m)) + '%)';
		}

		/* one colour per (kind, name): the same function has the same
		 * colour in every graph */
		function colour(kind, name) {
			var v = hash(name);
			switch (kind) {
			case 0: return 'hsl(0,0%,' + (80 + 6 * v) + '%)';
			case 1: return 'hsl(' + (5 + 40 * v) + ',80%,' + (55 + 8 * v) + '%)';
			case 2: return 'hsl(' + (185 + 25 * v) + ',60%,' + (50 + 10 * v) + '%)';
			case 3: return 'hsl(' + (270 + 25 * v) + ',45%,' + (60 + 10 * v) + '%)';
			case 4: return 'hsl(0,0%,' + (68 + 10 * v) + '%)';
			case 5: return 'hsl(' + (35 + 15 * v) + ',30%,' + (50 + 10 * v) + '%)';
			case 6: return 'hsl(' + (210 + 20 * v) + ',35%,' + (58 + 10 * v) + '%)';
			case 7: return 'hsl(' + (95 + 35 * v) + ',55%,' + (45 + 10 * v) + '%)';
			case 8: return 'hsl(' + (20 + 30 * v) + ',90%,' + (72 + 6 * v) + '%)';
			case 9: return 'hsl(350,' + (15 + 15 * v) + '%,' + (55 + 8 * v) + '%)';
			case 10: return 'hsl(55,90%,' + (58 + 8 * v) + '%)';
			default: return 'hsl(' + (25 + 30 * v) + ',45%,' + (62 + 8 * v) + '%)';
			}
		}

		/* ---- the trees ---------------------------------------------------- */

		/* Names in byte order: a child list is sorted by its names' ranks
		 * (flamegraph.pl's order), an integer compare. */
		var NAMES = D.names, RANK = new Int32Array(NAMES.length);
		(function () {
			var order = NAMES.map(function (_, i) { return i; }), i;
			order.sort(function (a, b) {
				return NAMES[a] < NAMES[b] ? -1 : NAMES[a] > NAMES[b] ? 1 : 0;
			});
			for (i = 0; i < order.length; i++)
				RANK[order[i]] = i;
		})();

		/* A tree in the layout drawing needs, from nodes in any order where
		 * a parent comes before its children (src: typed arrays parent,
		 * name, kind, self, samples, file, line, module; n nodes): nodes in
		 * preorder, children sorted, so that node i's subtree is [i, end[i])
		 * and its children are i + 1, end[i + 1], ...; total and samples of
		 * each subtree; depth; start, the offset of a node within the root in
		 * value units. */
		function layout(src) {
			var n = src.n, i, k, p, c;
			var first = new Int32Array(n + 1), kids = new Int32Array(n > 1 ? n - 1 : 1);
			var fill = new Int32Array(n + 1);
			for (i = 1; i < n; i++)
				first[src.parent[i] + 1]++;
			for (i = 0; i < n; i++)
				first[i + 1] += first[i];
			fill.set(first);
			for (i = 1; i < n; i++)
				kids[fill[src.parent[i]]++] = i;
			var byName = function (a, b) {
				return RANK[src.name[a]] - RANK[src.name[b]] || src.kind[a] - src.kind[b];
			};
			for (i = 0; i < n; i++)
				if (first[i + 1] - first[i] > 1)
					kids.subarray(first[i], first[i + 1]).sort(byName);
			/* totals on the source's order: children come after parents */
			var tot = new Float64Array(n), smp = new Float64Array(n);
			var ta = new Float64Array(src.a ? n : 0), tb = new Float64Array(src.a ? n : 0);
			for (i = n - 1; i >= 0; i--) {
				tot[i] += src.self[i];
				smp[i] += src.samples[i];
				if (i) {
					tot[src.parent[i]] += tot[i];
					smp[src.parent[i]] += smp[i];
				}
				if (src.a) {
					ta[i] += src.a[i];
					tb[i] += src.b[i];
					if (i) {
						ta[src.parent[i]] += ta[i];
						tb[src.parent[i]] += tb[i];
					}
				}
			}
			/* preorder: an explicit stack, children pushed last first */
			var t = { n: n, parent: new Int32Array(n), name: new Int32Array(n),
				  kind: new Uint8Array(n), self: new Float64Array(n), total: new Float64Array(n),
				  samples: new Float64Array(n), file: new Int32Array(n), line: new Int32Array(n),
				  module: new Int32Array(n), depth: new Int32Array(n), start: new Float64Array(n),
				  end: new Int32Array(n), maxDepth: 0,
				  a: src.a ? new Float64Array(n) : null, b: src.a ? new Float64Array(n) : null,
				  maxChange: 0 };
			var stack = new Int32Array(n + 1), newOf = new Int32Array(n), next = new Float64Array(n);
			var sp = 0, at = 0;
			stack[sp++] = 0;
			while (sp) {
				i = stack[--sp];
				k = at++;
				newOf[i] = k;
				p = i ? newOf[src.parent[i]] : 0;
				t.parent[k] = p;
				t.name[k] = src.name[i];
				t.kind[k] = src.kind[i];
				t.self[k] = src.self[i];
				t.total[k] = tot[i];
				t.samples[k] = smp[i];
				t.file[k] = src.file[i];
				t.line[k] = src.line[i];
				t.module[k] = src.module[i];
				if (src.a) {
					t.a[k] = ta[i];
					t.b[k] = tb[i];
					if (i && Math.abs(tb[i] - ta[i]) > t.maxChange)
						t.maxChange = Math.abs(tb[i] - ta[i]);
				}
				if (i) {
					t.depth[k] = t.depth[p] + 1;
					t.start[k] = next[p];
					next[p] += tot[i];
				}
				next[k] = t.start[k];
				if (t.depth[k] > t.maxDepth)
					t.maxDepth = t.depth[k];
				for (c = first[i + 1] - 1; c >= first[i]; c--)
					stack[sp++] = kids[c];
			}
			/* a subtree ends where the next node not below it starts */
			for (k = n - 1; k >= 0; k--)
				t.end[k] = k + 1;
			for (k = n - 1; k > 0; k--)
				if (t.end[k] > t.end[t.parent[k]])
					t.end[t.parent[k]] = t.end[k];
			return t;
		}

		/* The layout of nodes that come in preorder with their children
		 * sorted (flame.c writes them so: "preorder"): sums, depths and
		 * offsets in three linear passes, no sorting. */
		function laidOut(src) {
			var n = src.n, i, p, d;
			var t = { n: n, parent: src.parent, name: src.name, kind: src.kind, self: src.self,
				  total: new Float64Array(n), samples: new Float64Array(n), file: src.file,
				  line: src.line, module: src.module, depth: new Int32Array(n),
				  start: new Float64Array(n), end: new Int32Array(n), maxDepth: 0,
				  a: src.a ? new Float64Array(n) : null, b: src.a ? new Float64Array(n) : null,
				  maxChange: 0 };
			var next = new Float64Array(n);
			for (i = n - 1; i >= 0; i--) {
				t.total[i] += src.self[i];
				t.samples[i] += src.samples[i];
				if (src.a) {
					t.a[i] += src.a[i];
					t.b[i] += src.b[i];
				}
				if (i) {
					p = src.parent[i];
					t.total[p] += t.total[i];
					t.samples[p] += t.samples[i];
					if (src.a) {
						t.a[p] += t.a[i];
						t.b[p] += t.b[i];
					}
				}
			}
			for (i = 1; i < n; i++) {
				p = src.parent[i];
				d = t.depth[i] = t.depth[p] + 1;
				if (d > t.maxDepth)
					t.maxDepth = d;
				t.start[i] = next[p];
				next[p] += t.total[i];
				next[i] = t.start[i];
				if (src.a && Math.abs(t.b[i] - t.a[i]) > t.maxChange)
					t.maxChange = Math.abs(t.b[i] - t.a[i]);
			}
			for (i = n - 1; i >= 0; i--)
				t.end[i] = i + 1;
			for (i = n - 1; i > 0; i--)
				if (t.end[i] > t.end[src.parent[i]])
					t.end[src.parent[i]] = t.end[i];
			return t;
		}

		function forward() {
			if (D.preorder)
				return laidOut({ n: D.parent.length, parent: D.parent, name: D.name,
						 kind: D.kind, self: D.self, samples: D.samples, file: D.file,
						 line: D.line, module: D.module, a: D.a, b: D.b });
			return layout({ n: D.parent.length, parent: D.parent, name: D.name, kind: D.kind,
					self: D.self, samples: D.samples, file: D.file, line: D.line,
					module: D.module, a: D.a, b: D.b });
		}

		/* the callers of each leaf: every node with self weight, its path
		 * to the root reversed */
		function reverse(f) {
			var src = { n: 1, parent: [0], name: [0], kind: [0], self: [0], samples: [0],
				    file: [0], line: [0], module: [0], a: D.diff ? [0] : null,
				    b: D.diff ? [0] : null };
			var index = new Map(), i, p, node, key, j, w = NAMES.length * 16;
			for (i = 1; i < f.n; i++) {
				if (!f.self[i])
					continue;
				node = 0;
				for (p = i; p !== 0; p = f.parent[p]) {
					key = node * w + f.name[p] * 16 + f.kind[p];
					j = index.get(key);
					if (j === undefined) {
						j = src.n++;
						index.set(key, j);
						src.parent.push(node);
						src.name.push(f.name[p]);
						src.kind.push(f.kind[p]);
						src.self.push(0);
						src.samples.push(0);
						src.file.push(f.file[p]);
						src.line.push(f.line[p]);
						src.module.push(f.module[p]);
						if (D.diff) {
							src.a.push(0);
							src.b.push(0);
						}
					}
					node = j;
				}
				/* the weight is the leaf's own; layout sums it up the path */
				src.self[node] += f.self[i];
				src.samples[node] += f.samples[i] - childSamples(f, i);
				if (D.diff) {
					src.a[node] += f.a[i] - childSum(f.a, f, i);
					src.b[node] += f.b[i] - childSum(f.b, f, i);
				}
			}
			return layout(src);
		}

		/* a node's own samples: its subtree's less its children's */
		function childSamples(f, i) {
			return childSum(f.samples, f, i);
		}

		function childSum(v, f, i) {
			var s = 0, c;
			for (c = i + 1; c < f.end[i]; c = f.end[c])
				s += v[c];
			return s;
		}

		mark('ranked');
		var fwd = forward(), rev = null, T = fwd, T2 = performance.now();
		mark('laid out');
		var zoom = 0, icicle = false, matchName = null, matchedShare = 0, matchedCount = 0;
		var canvas = document.getElementById('fg'), ctx = canvas.getContext('2d');
		var status = document.getElementById('status'), info = document.getElementById('match');
		var rows = [], hidden = 0, hiddenValue = 0, drawn = 0;

		function nameOf(n) {
			return n ? NAMES[T.name[n]] : 'all';
		}

		/* ---- drawing --------------------------------------------------------- */

		function draw() {
			var dpr = window.devicePixelRatio || 1;
			var W = Math.max(200, document.documentElement.clientWidth - 20);
			var H = (T.maxDepth + 1) * ROW;
			var scale = W / (T.total[zoom] || 1), x0 = T.start[zoom];
			var stack = [0], n, x, w, y, d, label, clip0, clip1, c;
			canvas.width = W * dpr;
			canvas.height = H * dpr;
			canvas.style.width = W + 'px';
			canvas.style.height = H + 'px';
			ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
			ctx.clearRect(0, 0, W, H);
			ctx.font = '12px Verdana, sans-serif';
			ctx.textBaseline = 'middle';
			rows = [];
			hidden = 0;
			hiddenValue = 0;
			drawn = 0;
			while (stack.length) {
				n = stack.pop();
				/* the zoomed frame's callers span the whole width */
				if (n < zoom && zoom < T.end[n]) {
					x = 0;
					w = W;
				} else {
					x = (T.start[n] - x0) * scale;
					w = T.total[n] * scale;
				}
				clip0 = Math.max(0, x);
				clip1 = Math.min(W, x + w);
				if (clip1 - clip0 < MINW) {
					if (clip1 > 0 && clip0 < W && T.total[n] > 0) {
						hidden++;
						hiddenValue += T.total[n];
					}
					continue;
				}
				d = T.depth[n];
				y = icicle ? d * ROW : H - (d + 1) * ROW;
				ctx.fillStyle = matchName && n && matchName[T.name[n]] ? 'hsl(300,85%,62%)' :
					D.diff ? diffColour(T.a[n], T.b[n], T.maxChange) :
					colour(T.kind[n], nameOf(n));
				ctx.fillRect(clip0, y, Math.max(clip1 - clip0 - 0.5, 0.5), ROW - 1);
				if (clip1 - clip0 > 28) {
					label = fit(nameOf(n), clip1 - clip0 - 6);
					ctx.fillStyle = '#000';
					ctx.fillText(label, clip0 + 3, y + ROW / 2);
				}
				(rows[d] = rows[d] || []).push([clip0, clip1, n]);
				drawn++;
				/* children, the first on top of the stack */
				var kids = [];
				for (c = n + 1; c < T.end[n]; c = T.end[c])
					kids.push(c);
				for (c = kids.length - 1; c >= 0; c--)
					stack.push(kids[c]);
			}
			document.getElementById('hidden').textContent = hidden ?
				hidden + ' frames narrower than half a pixel not drawn (' +
				pct(hiddenValue, T.total[0]) + ' of the total)' : '';
		}

		function fit(s, w) {
			if (ctx.measureText(s).width <= w)
				return s;
			var lo = 0, hi = s.length;
			while (lo < hi) {
				var mid = (lo + hi + 1) >> 1;
				if (ctx.measureText(s.slice(0, mid) + '..').width <= w)
					lo = mid;
				else
					hi = mid - 1;
			}
			return lo ? s.slice(0, lo) + '..' : '';
		}

		function pct(a, b) {
			return b ? (100 * a / b).toFixed(2) + '%' : '0%';
		}

		function amount(v) {
			if (D.unit === 'ns')
				return (v / 1e6).toFixed(v < 1e7 ? 3 : 1) + ' ms';
			return v + ' ' + D.unit;
		}

		function at(ev) {
			var r = canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
			var H = (T.maxDepth + 1) * ROW;
			var d = Math.floor(icicle ? y / ROW : (H - y) / ROW), row = rows[d] || [], i;
			for (i = 0; i < row.length; i++)
				if (x >= row[i][0] && x < row[i][1])
					return row[i][2];
			return -1;
		}

		function describe(n) {
			var where = (T.module[n] ? ' in ' + NAMES[T.module[n]] : '') +
				(T.file[n] ? ' at ' + NAMES[T.file[n]] + (T.line[n] ? ':' + T.line[n] : '') : '');
			var parent = n ? T.total[T.parent[n]] : T.total[0];
			if (D.diff) {
				var d = T.b[n] - T.a[n];
				return nameOf(n) + ' [' + KIND[T.kind[n]][0] + ']' + where + ': ' +
					amount(T.a[n]) + ' before, ' + amount(T.b[n]) + ' after: ' +
					(d >= 0 ? '+' : '\u2212') + amount(Math.abs(d)) +
					(T.a[n] ? ' (' + (d >= 0 ? '+' : '\u2212') +
					 (100 * Math.abs(d) / T.a[n]).toFixed(1) + '%)' : ' (new)') +
					', ' + pct(T.b[n], T.b[0]) + ' of all after, ' +
					pct(T.a[n], T.a[0]) + ' before';
			}
			return nameOf(n) + ' [' + KIND[T.kind[n]][0] + ']' + where + ': ' +
				amount(T.total[n]) +
				(T.samples[n] && D.unit !== 'samples' ? ' (' + T.samples[n] + ' samples)' : '') +
				', ' + pct(T.total[n], T.total[0]) + ' of all, ' +
				pct(T.total[n], parent) + ' of its caller' +
				(T.self[n] ? ', self ' + amount(T.self[n]) : '');
		}

		/* ---- what a person does ---------------------------------------------- */

		function setZoom(n) {
			zoom = n < 0 ? 0 : n;
			draw();
		}

		function search(term) {
			var re = null, n, i, share = 0, count = 0;
			matchName = null;
			if (term) {
				if (term.length > 2 && term[0] === '/' && term[term.length - 1] === '/') {
					try {
						re = new RegExp(term.slice(1, -1));
					} catch (e) {
						info.textContent = 'bad regular expression: ' + e.message;
						draw();
						return;
					}
				}
				/* a name is tested once, however many frames have it */
				matchName = new Uint8Array(NAMES.length);
				for (i = 0; i < NAMES.length; i++)
					matchName[i] = re ? re.test(NAMES[i]) : NAMES[i].indexOf(term) >= 0;
				for (n = 1; n < T.n; n++)
					count += matchName[T.name[n]];
				/* the share: matched frames without a matched caller; in
				 * preorder a matched frame's subtree is skipped whole */
				for (n = 1; n < T.n;) {
					if (matchName[T.name[n]]) {
						share += T.total[n];
						n = T.end[n];
					} else {
						n++;
					}
				}
			}
			matchedShare = T.total[0] ? share / T.total[0] : 0;
			matchedCount = count;
			info.textContent = term ? 'matched ' + count + ' frames: ' + pct(share, T.total[0]) +
				' (' + amount(share) + ')' : '';
			draw();
		}

		function setTree(reversed) {
			if (reversed && !rev)
				rev = reverse(fwd);
			T = reversed ? rev : fwd;
			zoom = 0;
			search(document.getElementById('term').value);
		}

		canvas.addEventListener('mousemove', function (ev) {
			var n = at(ev);
			status.textContent = n >= 0 ? describe(n) : '';
		});
		canvas.addEventListener('click', function (ev) {
			var n = at(ev);
			if (n >= 0)
				setZoom(n === zoom ? T.parent[n] : n);
		});
		document.getElementById('reset').addEventListener('click', function () {
			document.getElementById('term').value = '';
			setZoom(0);
			search('');
		});
		document.getElementById('orient').addEventListener('click', function () {
			icicle = !icicle;
			this.textContent = icicle ? 'flame' : 'icicle';
			draw();
		});
		document.getElementById('reverse').addEventListener('click', function () {
			var on = this.getAttribute('aria-pressed') !== 'true';
			this.setAttribute('aria-pressed', on ? 'true' : 'false');
			this.textContent = on ? 'callees' : 'reverse (callers)';
			setTree(on);
		});
		document.getElementById('term').addEventListener('input', function () {
			search(this.value);
		});
		window.addEventListener('resize', draw);

		/* the legend: the kinds the graph has; a difference's colours */
		(function () {
			var seen = {}, el = document.getElementById('legend'), k, i;
			if (D.diff) {
				var m = fwd.maxChange || 1;
				[['grew (the largest growth)', diffColour(0, m, m)],
				 ['grew a little', diffColour(0, m / 10, m)],
				 ['unchanged', diffColour(1, 1, m)],
				 ['shrank a little', diffColour(1 + m / 10, 1, m)],
				 ['shrank (the largest shrinkage)', diffColour(1 + m, 1, m)],
				 ['only before (drawn in its width before)', diffColour(1, 0, m)]
				].forEach(function (e) {
					var s = document.createElement('span'), b = document.createElement('b');
					b.style.background = e[1];
					s.appendChild(b);
					s.appendChild(document.createTextNode(e[0]));
					el.appendChild(s);
				});
				return;
			}
			for (i = 0; i < D.kind.length; i++)
				seen[D.kind[i]] = true;
			for (k = 0; k < KIND.length; k++) {
				if (!seen[k])
					continue;
				var s = document.createElement('span'), b = document.createElement('b');
				b.style.background = colour(k, KIND[k][0]);
				s.appendChild(b);
				s.appendChild(document.createTextNode(KIND[k][1]));
				el.appendChild(s);
			}
		})();

		draw();
		var T3 = performance.now();
		mark('drawn');

		/* ---- the self-test ----------------------------------------------------- */
		var q = new URLSearchParams(location.search);
		if (q.get('selftest') === '1') {
			/* from the start of the navigation to the first drawing done */
			var out = { errors: errors, readyMs: Math.round(performance.now()),
				    scriptMs: { parse: Math.round(T1 - T0), layout: Math.round(T2 - T1),
						draw: Math.round(T3 - T2) } };
			if (q.get('reverse') === '1')
				document.getElementById('reverse').click();
			if (q.get('icicle') === '1')
				document.getElementById('orient').click();
			out.frames = drawn;
			out.nodes = T.n;
			out.total = T.total[0];
			var want = q.get('zoom'), z = -1, n;
			for (n = 1; n < T.n && want; n++)
				if (nameOf(n) === want) {
					z = n;
					break;
				}
			if (z < 0) {
				/* the widest child of the root */
				for (n = 1; n < T.n; n = T.end[n])
					if (z < 0 || T.total[n] > T.total[z])
						z = n;
			}
			if (z > 0) {
				/* a click in the middle of the frame, as a person would */
				var H = (T.maxDepth + 1) * ROW, r = canvas.getBoundingClientRect();
				var cx = (T.start[z] + T.total[z] / 2) * canvas.clientWidth / T.total[0];
				var cy = icicle ? T.depth[z] * ROW + ROW / 2 : H - T.depth[z] * ROW - ROW / 2;
				canvas.dispatchEvent(new MouseEvent('click', { clientX: r.left + cx,
									    clientY: r.top + cy, bubbles: true }));
			}
			out.zoomed = nameOf(zoom);
			if (D.diff) {
				out.before = T.a[zoom];
				out.after = T.b[zoom];
				out.maxChange = T.maxChange;
			}
			out.zoomedShare = T.total[zoom] / T.total[0];
			out.framesZoomed = drawn;
			var term = q.get('search') || '';
			var box = document.getElementById('term');
			box.value = term;
			box.dispatchEvent(new Event('input'));
			out.search = term;
			out.matched = matchedCount;
			out.matchedShare = matchedShare;
			out.matchText = info.textContent;
			out.hidden = hidden;
			out.view = (icicle ? 'icicle' : 'flame') + (T === rev ? ' reversed' : '');
			out.legend = document.getElementById('legend').textContent;
			out.status = z > 0 ? describe(z) : '';
			document.getElementById('selftest').textContent = JSON.stringify(out);
		}
	}

	load();
})();
