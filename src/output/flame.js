/* flame.js - the flame graph page of `kfold flamegraph` (output/flame.c
 * embeds it, with flame.css and the data, into one HTML file).
 *
 * The data (<script id="data" type="application/json">) is the tree of
 * frames kfold merged: per node its parent (node 0 is "all", parents come
 * before children), name, kind, self value, and file:line where every
 * frame merged into it agrees.  This draws it on a canvas: flame (root at
 * the bottom) or icicle, a reversed tree (callers of each leaf), click to
 * zoom, search by substring or /regex/, a status line for the frame under
 * the pointer.  Frames narrower than half a pixel are not drawn; the
 * status line says how many and what share they hold.
 *
 * ?selftest=1[&search=TEXT][&zoom=NAME][&reverse=1][&icicle=1] drives the
 * page as a person would (zoom, search) and writes what it then shows
 * into <pre id="selftest"> as JSON, for the browser test
 * (src/tests/flamegraph.sh).
 */
(function () {
	'use strict';
	var errors = [];
	window.addEventListener('error', function (e) { errors.push(String(e.message)); });

	var D = JSON.parse(document.getElementById('data').textContent);
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

	/* a tree: parallel arrays; kids sorted by name (flamegraph.pl's
	 * order), start[] the offset within the root in value units */
	function finish(t) {
		var n = t.name.length, i, k;
		t.kids = [];
		t.depth = new Int32Array(n);
		t.start = new Float64Array(n);
		for (i = 0; i < n; i++)
			t.kids.push([]);
		for (i = 1; i < n; i++) {
			t.kids[t.parent[i]].push(i);
			t.depth[i] = t.depth[t.parent[i]] + 1;
		}
		t.maxDepth = 0;
		for (i = 0; i < n; i++) {
			var c = t.kids[i], x = t.start[i];
			if (t.depth[i] > t.maxDepth)
				t.maxDepth = t.depth[i];
			c.sort(function (a, b) {
				var x = t.name[a], y = t.name[b];
				return x < y ? -1 : x > y ? 1 : t.kind[a] - t.kind[b];
			});
			for (k = 0; k < c.length; k++) {
				t.start[c[k]] = x;
				x += t.total[c[k]];
			}
		}
		return t;
	}

	function forward() {
		var n = D.parent.length, i;
		var t = { name: [], kind: D.kind, parent: D.parent, total: new Float64Array(n),
			  self: D.self, file: [], line: D.line };
		for (i = 0; i < n; i++) {
			t.name.push(D.names[D.name[i]]);
			t.file.push(D.file[i] ? D.names[D.file[i]] : '');
		}
		for (i = n - 1; i >= 0; i--) {
			t.total[i] += D.self[i];
			if (i)
				t.total[D.parent[i]] += t.total[i];
		}
		/* parents precede children, so the loop above summed each
		 * node's own total before adding it to its parent's */
		return finish(t);
	}

	/* the callers of each leaf: every node with self time, its path
	 * to the root reversed */
	function reverse(f) {
		var t = { name: ['all'], kind: [0], parent: [0], total: [0], self: [0], file: [''],
			  line: [0] };
		var index = new Map(), i, p, node, key, j;
		for (i = 1; i < f.name.length; i++) {
			if (!f.self[i])
				continue;
			t.total[0] += f.self[i];
			node = 0;
			for (p = i; p !== 0; p = f.parent[p]) {
				key = node + '\u0001' + f.kind[p] + '\u0001' + f.name[p];
				j = index.get(key);
				if (j === undefined) {
					j = t.name.length;
					index.set(key, j);
					t.name.push(f.name[p]);
					t.kind.push(f.kind[p]);
					t.parent.push(node);
					t.total.push(0);
					t.self.push(0);
					t.file.push(f.file[p]);
					t.line.push(f.line[p]);
				}
				t.total[j] += f.self[i];
				node = j;
			}
			t.self[node] += f.self[i];
		}
		t.total = Float64Array.from(t.total);
		return finish(t);
	}

	var fwd = forward(), rev = null, T = fwd;
	var zoom = 0, icicle = false, matches = null, matchedShare = 0, matchedCount = 0;
	var canvas = document.getElementById('fg'), ctx = canvas.getContext('2d');
	var status = document.getElementById('status'), info = document.getElementById('match');
	var rows = [], hidden = 0, hiddenValue = 0, drawn = 0;

	/* ---- drawing --------------------------------------------------------- */

	function draw() {
		var dpr = window.devicePixelRatio || 1;
		var W = Math.max(200, document.documentElement.clientWidth - 20);
		var H = (T.maxDepth + 1) * ROW;
		var scale = W / (T.total[zoom] || 1), x0 = T.start[zoom];
		var stack = [0], n, x, w, y, d, label, clip0, clip1, p;
		/* the zoomed frame's callers span the whole width */
		var callers = new Set();
		for (p = zoom; p !== 0; p = T.parent[p])
			callers.add(T.parent[p]);
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
			if (callers.has(n)) {
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
			ctx.fillStyle = matches && matches[n] ? 'hsl(300,85%,62%)' : colour(T.kind[n], T.name[n]);
			ctx.fillRect(clip0, y, Math.max(clip1 - clip0 - 0.5, 0.5), ROW - 1);
			if (clip1 - clip0 > 28) {
				label = fit(n === 0 ? 'all' : T.name[n], clip1 - clip0 - 6);
				ctx.fillStyle = '#000';
				ctx.fillText(label, clip0 + 3, y + ROW / 2);
			}
			(rows[d] = rows[d] || []).push([clip0, clip1, n]);
			drawn++;
			for (var k = T.kids[n].length - 1; k >= 0; k--)
				stack.push(T.kids[n][k]);
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
		var where = T.file[n] ? ' at ' + T.file[n] + (T.line[n] ? ':' + T.line[n] : '') : '';
		var parent = n ? T.total[T.parent[n]] : T.total[0];
		return (n ? T.name[n] : 'all') + ' [' + KIND[T.kind[n]][0] + ']' + where + ': ' +
			amount(T.total[n]) + ', ' + pct(T.total[n], T.total[0]) + ' of all, ' +
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
		matches = null;
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
			matches = new Uint8Array(T.name.length);
			for (n = 1; n < T.name.length; n++)
				if (re ? re.test(T.name[n]) : T.name[n].indexOf(term) >= 0) {
					matches[n] = 1;
					count++;
				}
			/* the share: matched frames without a matched caller */
			for (n = 1; n < T.name.length; n++) {
				if (!matches[n])
					continue;
				for (i = T.parent[n]; i !== 0 && !matches[i]; i = T.parent[i])
					;
				if (i === 0)
					share += T.total[n];
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

	/* the legend: the kinds the graph has */
	(function () {
		var seen = {}, el = document.getElementById('legend'), k, i;
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

	/* ---- the self-test ----------------------------------------------------- */
	var q = new URLSearchParams(location.search);
	if (q.get('selftest') === '1') {
		var out = { errors: errors };
		if (q.get('reverse') === '1')
			document.getElementById('reverse').click();
		if (q.get('icicle') === '1')
			document.getElementById('orient').click();
		out.frames = drawn;
		out.nodes = T.name.length;
		out.total = T.total[0];
		var want = q.get('zoom'), z = -1, n;
		for (n = 1; n < T.name.length && want; n++)
			if (T.name[n] === want) {
				z = n;
				break;
			}
		if (z < 0) {
			/* the widest child of the root */
			for (n = 0; n < T.kids[0].length; n++)
				if (z < 0 || T.total[T.kids[0][n]] > T.total[z])
					z = T.kids[0][n];
		}
		if (z > 0) {
			/* a click in the middle of the frame, as a person would */
			var H = (T.maxDepth + 1) * ROW, r = canvas.getBoundingClientRect();
			var cx = (T.start[z] + T.total[z] / 2) * canvas.clientWidth / T.total[0];
			var cy = icicle ? T.depth[z] * ROW + ROW / 2 : H - T.depth[z] * ROW - ROW / 2;
			canvas.dispatchEvent(new MouseEvent('click', { clientX: r.left + cx,
								    clientY: r.top + cy, bubbles: true }));
		}
		out.zoomed = zoom ? T.name[zoom] : 'all';
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
})();
