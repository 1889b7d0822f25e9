// Plain-SVG charts for the copse-hooks page: no library, nothing fetched.
"use strict";
(function () {
  const NS = "http://www.w3.org/2000/svg";

  function el(name, attrs, children) {
    const e = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== undefined && v !== null) e.setAttribute(k, String(v));
    }
    for (const c of children || []) {
      e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return e;
  }

  function svg(width, height, label) {
    return el("svg", {
      class: "chart",
      viewBox: `0 0 ${width} ${height}`,
      role: "img",
      "aria-label": label,
      preserveAspectRatio: "xMidYMid meet",
    });
  }

  function niceMax(v) {
    if (v <= 0) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  function short(n) {
    if (n >= 1e6) return (n / 1e6).toFixed(n >= 1e7 ? 0 : 1) + "M";
    if (n >= 1e3) return (n / 1e3).toFixed(n >= 1e4 ? 0 : 1) + "k";
    return String(Math.round(n * 100) / 100);
  }

  function clock(ms, spanMs) {
    const d = new Date(ms);
    const p = (x) => String(x).padStart(2, "0");
    if (spanMs > 3 * 86400000) return `${p(d.getMonth() + 1)}-${p(d.getDate())}`;
    return `${p(d.getHours())}:${p(d.getMinutes())}`;
  }

  // Runs, denials and failures per time bucket: stacked columns.
  function timeSeries(buckets, opts) {
    const W = Math.round((opts && opts.width) || 1100), H = W < 600 ? 200 : 260, L = 44, R = 10, T = 12, B = 28;
    const s = svg(W, H, (opts && opts.label) || "Runs over time");
    let max = niceMax(Math.max(1, ...buckets.map((b) => b.runs)));
    if (max < 8) max = max <= 4 ? 4 : 8; // whole-number ticks
    const iw = W - L - R, ih = H - T - B;
    for (let i = 0; i <= 4; i++) {
      const y = T + ih - (ih * i) / 4;
      s.appendChild(el("line", { class: "grid", x1: L, x2: W - R, y1: y, y2: y }));
      s.appendChild(el("text", { x: L - 6, y: y + 4, "text-anchor": "end" }, [short((max * i) / 4)]));
    }
    const n = Math.max(1, buckets.length);
    const bw = iw / n;
    const span = buckets.length > 1 ? buckets[buckets.length - 1].start - buckets[0].start : 0;
    buckets.forEach((b, i) => {
      const x = L + i * bw + Math.min(1, bw * 0.1);
      const w = Math.max(1, bw - Math.min(2, bw * 0.2));
      const h = (ih * b.runs) / max;
      const hd = (ih * b.denials) / max;
      const hf = (ih * b.failures) / max;
      const tip = `${new Date(b.start).toLocaleString()} — ${b.runs} runs, ${b.denials} denied, ${b.failures} failed`;
      s.appendChild(el("rect", { class: "runs", x, y: T + ih - h, width: w, height: h }, [el("title", {}, [tip])]));
      if (hd > 0) s.appendChild(el("rect", { class: "denials", x, y: T + ih - hd, width: w, height: hd }, [el("title", {}, [tip])]));
      if (hf > 0) s.appendChild(el("rect", { class: "failures", x, y: T + ih - hd - hf, width: w, height: hf }, [el("title", {}, [tip])]));
      // A time label needs about 48 px: fewer of them in a narrow chart.
      const every = Math.max(1, Math.ceil(n / Math.max(2, Math.min(8, Math.floor(iw / 56)))));
      if (i % every === 0) {
        s.appendChild(el("text", { x: x + w / 2, y: H - 8, "text-anchor": "middle" }, [clock(b.start, span)]));
      }
    });
    s.appendChild(el("line", { class: "axis", x1: L, x2: W - R, y1: T + ih, y2: T + ih }));
    return s;
  }

  // A latency histogram: counts per bucket edge.
  function histogram(counts, edges, opts) {
    const W = 300, H = 130, L = 30, R = 6, T = 8, B = 30;
    const s = svg(W, H, (opts && opts.label) || "Latency distribution");
    const max = niceMax(Math.max(1, ...counts));
    const iw = W - L - R, ih = H - T - B;
    const n = counts.length;
    const bw = iw / n;
    const step = Math.max(1, Math.ceil(44 / bw));
    s.appendChild(el("text", { x: L - 4, y: T + 8, "text-anchor": "end" }, [short(max)]));
    counts.forEach((c, i) => {
      const h = (ih * c) / max;
      const lo = i === 0 ? 0 : edges[i - 1];
      const label = i < edges.length ? `≤${edges[i] >= 1000 ? edges[i] / 1000 + "s" : edges[i] + "ms"}` : `>${edges[edges.length - 1] / 1000}s`;
      const tip = i < edges.length ? `${lo}–${edges[i]} ms: ${c} runs` : `over ${edges[edges.length - 1]} ms: ${c} runs`;
      s.appendChild(el("rect", { class: "bar", x: L + i * bw + 1, y: T + ih - h, width: Math.max(1, bw - 2), height: h }, [el("title", {}, [tip])]));
      // Labels at most every 44 units (about six characters), so they never overlap.
      if (i % step === 0) s.appendChild(el("text", { x: L + i * bw + bw / 2, y: H - 16, "text-anchor": "middle" }, [label]));
    });
    s.appendChild(el("line", { class: "axis", x1: L, x2: W - R, y1: T + ih, y2: T + ih }));
    return s;
  }

  // Horizontal bars: p95 with a p50 mark, one row per hook.
  function slowest(rows, opts) {
    const W = Math.round((opts && opts.width) || 1100);
    // Narrow: each label on a line of its own above its bar.
    const stacked = W < 640;
    const rowH = stacked ? 40 : 26, L = 10, R = 70, T = 6;
    const H = T + rows.length * rowH + 6;
    const s = svg(W, H, (opts && opts.label) || "Slowest hooks");
    const max = niceMax(Math.max(1, ...rows.map((r) => r.p95)));
    const labelW = stacked ? 0 : Math.min(420, Math.round(W * 0.4));
    const iw = W - L - labelW - R;
    const chars = Math.max(12, Math.floor((stacked ? W - L - R : labelW - 10) / 6.6));
    rows.forEach((r, i) => {
      const y = T + i * rowH + (stacked ? 14 : 0);
      s.appendChild(el("text", { x: L, y: stacked ? y - 2 : y + 16 }, [r.label.length > chars ? r.label.slice(0, chars - 1) + "…" : r.label]));
      const w = Math.max(2, (iw * r.p95) / max);
      const tip = `${r.label}: p50 ${r.p50} ms, p95 ${r.p95} ms, ${r.runs} runs`;
      s.appendChild(el("rect", { class: "bar p95", x: L + labelW, y: y + 5, width: w, height: 14, rx: 3 }, [el("title", {}, [tip])]));
      const x50 = L + labelW + (iw * r.p50) / max;
      s.appendChild(el("line", { class: "mark", x1: x50, x2: x50, y1: y + 3, y2: y + 21 }, [el("title", {}, [tip])]));
      s.appendChild(el("text", { x: L + labelW + w + 6, y: y + 16 }, [`${r.p95} ms`]));
    });
    return s;
  }

  window.Charts = { timeSeries, histogram, slowest };
})();
