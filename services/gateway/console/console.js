/**
 * The operator console's page script: one EventSource on `console/events` (the gateway's
 * console-feed.ts), a card per chain with a depth chart per pair (SVG drawn here: two step
 * areas, no library), the levels as a table beside it (exactly the strings of `GET /v2/price`),
 * the readiness of every part and the sign rate, each pair's standing against its reference (its
 * band, deviation and reference age: a withheld pair is out of the book, and shows here), and the
 * maker's ledger of the day as a table. A chain whose book goes, or every chain while the stream
 * is down, shows "unavailable" and no chart: never a stale chart as if live; the ledger and the
 * references tables are emptied while the stream is down.
 */
'use strict';

(() => {
  const SVG = 'http://www.w3.org/2000/svg';
  const W = 560;
  const H = 220;
  const PAD = { left: 56, right: 12, top: 12, bottom: 26 };

  /** chainId → { card, book, symbols } */
  const chains = new Map();
  /** Gateway clock minus ours (ms), from the latest status: ages are measured on the gateway's clock. */
  let skewMs = 0;

  const $ = (sel, root = document) => root.querySelector(sel);

  function el(tag, attrs = {}, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function svgEl(tag, attrs = {}, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function chain(chainId) {
    let c = chains.get(chainId);
    if (c) return c;
    const card = el('section', { class: 'chain', 'data-chain': chainId, 'data-state': 'waiting' });
    const head = el('h2', {}, `Chain ${chainId} `);
    head.append(el('span', { class: 'badge state', 'data-state': 'waiting' }, 'waiting'));
    const dl = el('dl');
    for (const [key, label] of [
      ['block', 'block'],
      ['age', 'age'],
      ['sign-rate', 'sign rate'],
      ['indexers', 'indexers'],
      ['ledger', 'ledger'],
    ]) {
      dl.append(el('dt', {}, label), el('dd', { 'data-field': key }, '—'));
    }
    card.append(head, dl, el('div', { class: 'references' }), el('div', { class: 'pairs' }));
    const list = $('#chains');
    // Cards in chain order, whichever event created them first.
    const after = [...list.children].find((n) => Number(n.dataset.chain) > chainId);
    list.insertBefore(card, after ?? null);
    c = { card, book: null, symbols: {} };
    chains.set(chainId, c);
    return c;
  }

  function setState(c, state, label = state) {
    c.card.dataset.state = state;
    const badge = $('.state', c.card);
    badge.dataset.state = state;
    badge.textContent = label;
  }

  const field = (c, name) => $(`[data-field="${name}"]`, c.card);
  const symbolOf = (c, address) => c.symbols[address.toLowerCase()] ?? `${address.slice(0, 6)}…${address.slice(-4)}`;

  /** Cumulative depth: [{price, total}] from the best level outwards. */
  function cumulative(levels) {
    let total = 0;
    return levels.map((l) => ({ price: Number(l.price), total: (total += Number(l.amount)) }));
  }

  function fmt(n) {
    return Number(n)
      .toPrecision(6)
      .replace(/\.?0+$/, '');
  }

  /** An SVG depth chart: bids (price descending) to the left, asks (ascending) to the right. */
  function depthChart(pair, blockNumber, title) {
    const bids = cumulative(pair.bids);
    const asks = cumulative(pair.asks);
    const prices = [...bids, ...asks].map((p) => p.price);
    const svg = svgEl('svg', {
      class: 'depth',
      viewBox: `0 0 ${W} ${H}`,
      role: 'img',
      'aria-label': `Depth chart of ${title} at block ${blockNumber}`,
      'data-block': blockNumber,
      'data-bids': bids.length,
      'data-asks': asks.length,
    });
    const x0 = PAD.left;
    const x1 = W - PAD.right;
    const y0 = H - PAD.bottom;
    const y1 = PAD.top;
    svg.append(svgEl('line', { class: 'axis', x1: x0, y1: y0, x2: x1, y2: y0 }));
    svg.append(svgEl('line', { class: 'axis', x1: x0, y1: y0, x2: x0, y2: y1 }));
    if (prices.length === 0) {
      svg.append(svgEl('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle' }, 'no levels'));
      return svg;
    }
    const lo = Math.min(...prices);
    const hi = Math.max(...prices);
    const span = hi - lo || Math.abs(hi) || 1;
    const pMin = lo - span * 0.02;
    const pMax = hi + span * 0.02;
    const depth = Math.max(bids.at(-1)?.total ?? 0, asks.at(-1)?.total ?? 0) * 1.05 || 1;
    const x = (p) => x0 + ((p - pMin) / (pMax - pMin)) * (x1 - x0);
    const y = (v) => y0 - (v / depth) * (y0 - y1);
    // A step area: at each level's price the depth rises to its cumulative total, then runs on
    // to the next level's price; after the last level it runs to the chart's edge.
    const area = (points, edge) => {
      if (points.length === 0) return null;
      let d = `M${x(points[0].price)},${y(0)}`;
      points.forEach((p, i) => {
        d += ` L${x(p.price)},${y(p.total)}`;
        const next = points[i + 1] ? points[i + 1].price : edge;
        d += ` L${x(next)},${y(p.total)}`;
      });
      return `${d} L${x(edge)},${y(0)} Z`;
    };
    const bidPath = area(bids, pMin);
    const askPath = area(asks, pMax);
    if (bidPath) svg.append(svgEl('path', { class: 'bids', d: bidPath }));
    if (askPath) svg.append(svgEl('path', { class: 'asks', d: askPath }));
    svg.append(svgEl('text', { x: x0, y: H - 8, 'text-anchor': 'start' }, fmt(pMin)));
    svg.append(svgEl('text', { x: x1, y: H - 8, 'text-anchor': 'end' }, fmt(pMax)));
    const mid = bids[0] && asks[0] ? `${fmt(bids[0].price)} | ${fmt(asks[0].price)}` : fmt(prices[0]);
    svg.append(svgEl('text', { x: (x0 + x1) / 2, y: H - 8, 'text-anchor': 'middle' }, mid));
    svg.append(svgEl('text', { x: x0 - 4, y: y1 + 8, 'text-anchor': 'end' }, fmt(depth)));
    svg.append(svgEl('text', { x: x0 - 4, y: y0, 'text-anchor': 'end' }, '0'));
    return svg;
  }

  function levelsTable(pair, blockNumber, title) {
    const table = el('table', { class: 'levels' });
    table.append(el('caption', {}, `Levels of ${title} at block ${blockNumber}`));
    const head = el('tr');
    for (const h of ['side', 'price', 'amount']) head.append(el('th', { scope: 'col' }, h));
    const thead = el('thead');
    thead.append(head);
    table.append(thead);
    const body = el('tbody');
    for (const [side, levels] of [
      ['bid', pair.bids],
      ['ask', pair.asks],
    ]) {
      for (const level of levels) {
        const row = el('tr', { 'data-side': side });
        row.append(el('td', {}, side), el('td', {}, level.price), el('td', {}, level.amount));
        body.append(row);
      }
    }
    table.append(body);
    return table;
  }

  function render(c) {
    const book = c.book;
    const pairs = $('.pairs', c.card);
    pairs.replaceChildren();
    if (!book) return;
    for (const pair of book.pairs) {
      const title = `${symbolOf(c, pair.baseToken)} / ${symbolOf(c, pair.quoteToken)}`;
      const figure = el('figure', { class: 'pair', 'data-base': pair.baseToken.toLowerCase() });
      figure.append(el('h3', {}, title), depthChart(pair, book.blockNumber, title));
      const details = el('details');
      details.append(el('summary', {}, `levels (${pair.bids.length} bids, ${pair.asks.length} asks)`));
      details.append(levelsTable(pair, book.blockNumber, title));
      figure.append(details);
      pairs.append(figure);
    }
    if (book.pairs.length === 0) pairs.append(el('p', {}, 'live, but no pairs are tracked'));
  }

  function onBook(book) {
    const c = chain(book.chainId);
    c.book = book;
    setState(c, 'live');
    c.card.dataset.block = book.blockNumber;
    field(c, 'block').textContent = String(book.blockNumber);
    render(c);
    tickAges();
  }

  function onUnavailable(chainId, why = 'no live book: GET /v2/price answers 503') {
    const c = chain(chainId);
    c.book = null;
    setState(c, 'unavailable');
    delete c.card.dataset.block;
    field(c, 'block').textContent = '—';
    field(c, 'age').textContent = '—';
    const pairs = $('.pairs', c.card);
    pairs.replaceChildren(el('p', { class: 'unavailable-note' }, `Unavailable: ${why}`));
  }

  const amount = (n) => n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

  /** The ledger's rows of every chain (text only: integrator ids are the operator's, nothing here is markup). */
  function renderLedger(status) {
    const body = $('#ledger tbody');
    body.replaceChildren();
    const days = new Set(status.chains.filter((s) => s.ledger).map((s) => s.ledger.day));
    $('#ledger-day').textContent = days.size === 1 ? `${[...days][0]} UTC` : 'UTC';
    for (const s of status.chains) {
      const c = chain(s.chainId);
      const held = field(c, 'ledger');
      if (s.ledger === null) {
        held.textContent = 'unknown (Redis unreachable)';
        body.append(row(s.chainId, { note: 'unknown: Redis unreachable' }));
        continue;
      }
      const { block } = s.ledger;
      held.dataset.block = block ?? '';
      held.textContent =
        block === null
          ? 'no ledger has written on this chain'
          : `block ${block}${c.book ? ` (${Math.max(0, c.book.blockNumber - block)} behind the book)` : ''}`;
      const quote = s.quoteToken ? symbolOf(c, s.quoteToken) : 'quote token';
      for (const r of s.ledger.integrators) body.append(row(s.chainId, r, quote));
    }
    if (body.children.length === 0) body.append(row(null, { note: 'no executed swaps today' }));
  }

  function row(chainId, r, quote) {
    const tr = el('tr', chainId === null ? {} : { 'data-chain': chainId });
    if (r.note) {
      tr.append(el('td', {}, chainId === null ? '' : String(chainId)), el('td', { colspan: 7, class: 'note' }, r.note));
      return tr;
    }
    tr.dataset.integrator = r.integratorId;
    const who = r.integratorId === '' ? '(unattributed)' : r.integratorId;
    const markout =
      r.markout60sBps === null
        ? el('td', { 'data-field': 'markout', 'data-value': '' }, 'no swap 60 s old yet')
        : el(
            'td',
            {
              'data-field': 'markout',
              'data-value': r.markout60sBps,
              'data-sign': r.markout60sBps < 0 ? 'negative' : 'positive',
            },
            `${r.markout60sBps.toFixed(1)} bps (${r.markoutSwaps} swap${r.markoutSwaps === 1 ? '' : 's'})`,
          );
    tr.append(
      el('td', {}, String(chainId)),
      el('td', { 'data-field': 'integrator' }, who),
      el('td', { 'data-field': 'swaps', 'data-value': r.swaps }, String(r.swaps)),
      el('td', { 'data-field': 'notional', 'data-value': r.notional }, `${amount(r.notional)} ${quote}`),
      el('td', { 'data-field': 'reverts', 'data-value': r.reverts }, String(r.reverts)),
      share('fill', r.fillRate, r.firmExecuted, r.firm),
      share('unused', r.unusedShare, r.firmUnused, r.firm),
      markout,
    );
    return tr;
  }

  /** A share of the firm signatures judged today: `50 % (1 of 2)`, or a dash before the first. */
  function share(name, rate, part, firm) {
    if (rate === null) return el('td', { 'data-field': name, 'data-value': '' }, '–');
    return el('td', { 'data-field': name, 'data-value': rate }, `${Math.round(rate * 100)} % (${part} of ${firm})`);
  }

  const signed = (n, digits = 1) => `${n > 0 ? '+' : ''}${n.toFixed(digits)}`;

  /** Each pair's standing against its reference (text only), or a note when unknown or none. */
  function renderReferences(c, refs) {
    const holder = $('.references', c.card);
    if (refs === null) {
      holder.replaceChildren(el('p', { class: 'note' }, 'references: unknown (Redis unreachable)'));
      return;
    }
    if (refs.length === 0) {
      holder.replaceChildren();
      return;
    }
    const table = el('table', { class: 'references' });
    table.append(el('caption', {}, `References at block ${refs[0].block}`));
    const head = el('tr');
    for (const h of ['pair', 'standing', 'status', 'deviation', 'band (bps)', 'age', 'since'])
      head.append(el('th', { scope: 'col' }, h));
    const thead = el('thead');
    thead.append(head);
    const body = el('tbody');
    for (const r of refs) {
      const standing = r.withheld ? 'withheld' : r.served ? 'served' : 'watched';
      const tr = el('tr', {
        'data-base': r.base,
        'data-status': r.status,
        'data-withheld': r.withheld,
        'data-state': r.served ? 'ok' : 'fail',
      });
      tr.append(
        el('td', {}, symbolOf(c, r.base)),
        el('td', { 'data-field': 'standing' }, standing),
        el('td', { 'data-field': 'status' }, r.status.replace(/_/g, ' ')),
        el(
          'td',
          { 'data-field': 'deviation', 'data-value': r.deviationBps ?? '' },
          r.deviationBps === null ? '—' : `${signed(r.deviationBps)} bps`,
        ),
        el('td', { 'data-field': 'band' }, `−${r.maxDeviationBelowBps}…+${r.maxDeviationAboveBps}`),
        el(
          'td',
          { 'data-field': 'age', 'data-value': r.ageSeconds ?? '' },
          r.ageSeconds === null ? '—' : `${r.ageSeconds} s`,
        ),
        el('td', { 'data-field': 'since', title: 'the block its standing last changed' }, String(r.since)),
      );
      body.append(tr);
    }
    table.append(thead, body);
    holder.replaceChildren(table);
  }

  function onStatus(status) {
    skewMs = status.time - Date.now();
    const parts = $('#parts');
    parts.replaceChildren();
    for (const [name, outcome] of Object.entries(status.parts)) {
      const ok = outcome === 'ok';
      parts.append(el('li', { 'data-part': name, 'data-state': ok ? 'ok' : 'fail' }, `${name}: ${outcome}`));
    }
    // The active halts, oldest first: scope, since when, who and why (text only: nothing here is markup).
    const halts = $('#halts');
    halts.replaceChildren();
    if (status.halts.length === 0) halts.append(el('li', { 'data-state': 'ok' }, 'nothing halted'));
    for (const h of status.halts) {
      const trip = h.trip
        ? ` (limit ${h.trip.limit} tripped: value ${h.trip.value}, threshold ${h.trip.threshold})`
        : '';
      const since = new Date(h.at).toISOString().replace(/\.\d{3}Z$/, 'Z');
      halts.append(
        el(
          'li',
          { 'data-halt': h.scope, 'data-state': 'fail' },
          `${h.scope}: since ${since} by ${h.by}: ${h.reason}${trip}`,
        ),
      );
    }
    let total = 0;
    let known = true;
    for (const s of status.chains) {
      const c = chain(s.chainId);
      const symbolsChanged = JSON.stringify(s.symbols) !== JSON.stringify(c.symbols);
      c.symbols = s.symbols;
      if (symbolsChanged && c.book) render(c);
      const rate = field(c, 'sign-rate');
      rate.dataset.value = s.signRate ?? '';
      rate.textContent = s.signRate === null ? 'measuring…' : `${s.signRate.toFixed(2)} signatures/s (all signers)`;
      if (s.signRate === null) known = false;
      else total += s.signRate;
      renderReferences(c, s.references);
      const indexers = field(c, 'indexers');
      if (s.indexers === null) {
        indexers.textContent = 'unknown (Redis unreachable)';
        indexers.dataset.replicas = '';
        continue;
      }
      indexers.dataset.replicas = s.indexers.length;
      indexers.dataset.health = s.indexers.some((i) => i.nodeUp) ? 'ok' : 'fail';
      const list = el('ul', { class: 'indexers' });
      for (const i of s.indexers) {
        const head = i.headBlock === null ? 'no head yet' : `head ${i.headBlock}`;
        list.append(
          el(
            'li',
            { 'data-replica': i.replica, 'data-node': i.nodeUp ? 'up' : 'down' },
            `${i.replica}: node ${i.nodeUp ? 'connected' : 'DOWN'}, ${head} (${i.transport})`,
          ),
        );
      }
      indexers.replaceChildren(`${s.indexers.length} replica${s.indexers.length === 1 ? '' : 's'}`, list);
    }
    $('#sign-rate-total').textContent = known ? `signing ${total.toFixed(2)}/s across chains` : '';
    renderLedger(status);
  }

  function tickAges() {
    const now = (Date.now() + skewMs) / 1_000;
    for (const c of chains.values()) {
      if (!c.book) continue;
      const age = c.book.blockTime > 0 ? Math.max(0, now - c.book.blockTime) : NaN;
      field(c, 'age').textContent = Number.isNaN(age) ? '—' : `${age.toFixed(1)} s`;
    }
  }
  setInterval(tickAges, 500);

  function connection(state, text) {
    const node = $('#connection');
    node.dataset.state = state;
    node.textContent = text;
  }

  const events = new EventSource('console/events');
  events.addEventListener('open', () => connection('live', 'live'));
  events.addEventListener('error', () => {
    connection('reconnecting', 'stream lost: reconnecting…');
    // Nothing can be trusted while the stream is down; the feed resends everything on reconnect.
    for (const [chainId, c] of chains) {
      onUnavailable(chainId, 'the console lost its stream');
      $('.references', c.card).replaceChildren();
    }
    $('#ledger tbody').replaceChildren(row(null, { note: 'unknown: the console lost its stream' }));
  });
  events.addEventListener('book', (e) => onBook(JSON.parse(e.data)));
  events.addEventListener('unavailable', (e) => onUnavailable(JSON.parse(e.data).chainId));
  events.addEventListener('status', (e) => onStatus(JSON.parse(e.data)));
})();
