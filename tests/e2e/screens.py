"""What the report-screen test measures on one open page (Chromium, Playwright), as data:
the banner, the elements wider than the viewport (charts, their grid and their shared
legend counted apart), overlapping tick labels, legend entries that share a style and
chart titles cut off at their chart's right edge.
Read by tests/e2e/test_report_screens.py.

Lengths in CSS pixels."""
from __future__ import annotations

MEASURE = r"""() => {
  const W = window.innerWidth;
  const out = {width: W, scrollWidth: document.documentElement.scrollWidth};
  // (a) the banner: right under the title, after the run line
  const v = document.getElementById('verdict');
  out.banner = v ? {
    count: document.querySelectorAll('#verdict').length,
    exit: v.getAttribute('data-exit-code'), cls: v.className,
    words: (v.querySelector('.verdict-words') || {}).innerText || '',
    worst: (v.querySelector('.verdict-worst') || {}).innerText || '',
    scope: (v.querySelector('.verdict-scope') || {}).innerText || '',
    underTitle: !!document.querySelector('h1 + #run-line + #verdict'),
    command: (document.getElementById('run-command') || {}).innerText || '',
    bg: getComputedStyle(v).backgroundColor} : null;
  // (b) elements whose right edge passes the viewport, outside any horizontal scroller
  const scroller = el => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      const ox = getComputedStyle(p).overflowX;
      if ((ox === 'auto' || ox === 'scroll' || ox === 'hidden') && p !== document.body
          && p !== document.documentElement) return true;
    }
    return false;
  };
  const wide = [], wideCharts = [];
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if (r.right > W + 1 && !scroller(el)) {
      const tag = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
        (el.className && typeof el.className === 'string' ? '.' + el.className.split(' ')[0] : '');
      // charts, their grid and their shared legend apart from the rest of the page
      const chart = !!el.closest('.plotgrid, div.plot, .shared-legend');
      (chart ? wideCharts : wide).push(tag + ' right=' + Math.round(r.right));
    }
  }
  // text running out of its own box (a long unbroken word in a title or a line)
  for (const el of document.body.querySelectorAll('*')) {
    if (el.clientWidth === 0 || scroller(el) || el.closest('.plotgrid, div.plot, .shared-legend')
        || el.querySelector('.plotgrid, div.plot, .shared-legend')) continue;
    const ox = getComputedStyle(el).overflowX;
    if ((ox === 'visible') && el.scrollWidth > el.clientWidth + 1
        && el.getBoundingClientRect().left + el.scrollWidth > W + 1)
      wide.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + ' text overflows to '
                + Math.round(el.getBoundingClientRect().left + el.scrollWidth));
  }
  out.wide = wide.slice(0, 12); out.nWide = wide.length;
  out.wideCharts = wideCharts.slice(0, 12); out.nWideCharts = wideCharts.length;
  // (c) overlapping tick labels within each axis of each chart
  const overlaps = [];
  document.querySelectorAll('div.plot').forEach((plot, k) => {
    const title = ((plot.layout || {}).title || {}).text || ('chart ' + k);
    plot.querySelectorAll('g.xaxislayer-above, g.yaxislayer-above').forEach(layer => {
      const boxes = Array.from(layer.querySelectorAll('g.xtick text, g.ytick text'))
        .filter(t => t.textContent.trim() !== '')
        .map(t => [t.textContent, t.getBoundingClientRect()])
        .filter(([_, r]) => r.width > 0 && r.height > 0);
      for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i][1], b = boxes[j][1];
        const ox = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const oy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (ox > 0.5 && oy > 0.5)
          overlaps.push(title + ': ' + boxes[i][0] + ' / ' + boxes[j][0]);
      }
    });
  });
  out.overlaps = overlaps.slice(0, 12); out.nOverlaps = overlaps.length;
  // (d) legend entries sharing a style (colour + symbol + dash) within one chart
  const dup = [];
  document.querySelectorAll('div.plot').forEach((plot, k) => {
    const L = plot._fullLayout || {};
    if (!L.showlegend) return;
    const title = ((plot.layout || {}).title || {}).text || ('chart ' + k);
    const seen = {};
    (plot._fullData || []).forEach(t => {
      if (!t.showlegend || t.visible === false) return;
      const mode = t.mode || t.type;
      const line = /lines/.test(mode) ? [t.line && t.line.color, t.line && t.line.dash] : [];
      const mk = /markers/.test(mode) || t.type === 'bar'
        ? [t.marker && String(t.marker.color), t.marker && t.marker.symbol] : [];
      const key = JSON.stringify([t.type, line, mk]);
      if (seen[key] !== undefined) dup.push(title + ': "' + seen[key] + '" and "' + t.name + '"');
      else seen[key] = t.name;
    });
  });
  out.duplicates = dup.slice(0, 12); out.nDuplicates = dup.length;
  // (e) chart titles running past their chart's right edge (cut off there)
  const cut = [];
  document.querySelectorAll('div.plot').forEach((plot, k) => {
    const t = plot.querySelector('text.gtitle');
    if (!t) return;
    const r = t.getBoundingClientRect(), p = plot.getBoundingClientRect();
    if (r.width > 0 && r.right > p.right + 1)
      cut.push((t.textContent || ('chart ' + k)) + ' right=' + Math.round(r.right) +
               ' > ' + Math.round(p.right));
  });
  out.cutTitles = cut.slice(0, 12); out.nCutTitles = cut.length;
  return out;
}"""
