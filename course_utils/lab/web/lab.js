// The learning-rate lab, drawn in the browser. One ES module for every host:
//   - a notebook or Voila: anywidget renders it with the kernel's model (course_utils/lab/widget.py);
//   - the classroom's page and the website: host.js gives it a model of its own (no kernel).
// The model holds the sweep of the current setting (`payload`, made by course_utils/lab/payload.py), the
// texts in the learner's language (`labels`), the state, the tries and the lines the lab says. A slider
// drag is drawn here from the payload alone; the host hears of it only on release ({action: "slider"}).
// Everything else a learner does is sent as an action; the host answers by changing the model.

const KIND_NAMES = ["diverged", "diverging", "no progress", "healthy"];
const DIVERGED_COLOR = "#dc143c";
const FONT = "13px system-ui, -apple-system, 'Segoe UI', 'Noto Sans CJK SC', 'WenQuanYi Micro Hei', sans-serif";
const SMALL = "12px system-ui, -apple-system, 'Segoe UI', 'Noto Sans CJK SC', 'WenQuanYi Micro Hei', sans-serif";

// ---- payload -----------------------------------------------------------------------------------------
export function decode(buffer) {
  const bytes = buffer instanceof DataView ? new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
    : buffer instanceof ArrayBuffer ? new Uint8Array(buffer) : new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const magic = String.fromCharCode(...bytes.subarray(0, 6));
  if (magic !== "LRLAB1") throw new Error("not a lab payload (it must start with LRLAB1)");
  const n = new DataView(bytes.buffer, bytes.byteOffset + 6, 4).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(10, 10 + n)));
  const data = bytes.slice(10 + n);  // a copy: aligned for Float32Array whatever the source buffer
  const floats = new Float32Array(data.buffer, 0, data.byteLength / 4);
  const k = header.lrs.length, steps = header.steps;
  header.paths = floats.subarray(0, k * (steps + 1) * 2);
  header.losses = floats.subarray(k * (steps + 1) * 2);
  return header;
}

export function runOf(sweep, i) {
  const s = sweep.steps;
  return {
    path: sweep.paths.subarray(i * (s + 1) * 2, (i + 1) * (s + 1) * 2),
    losses: sweep.losses.subarray(i * s, (i + 1) * s),
    lr: sweep.lrs[i], label: sweep.labels[i], kind: KIND_NAMES[sweep.kinds[i]], text: sweep.texts[i],
    headline: sweep.headlines[i], steps: s,
  };
}

// str.format's few forms the lab's texts use: {name}, {name:.4g}, {name:.2f}, {name:.1e}, {name:.0%}, {name!r}
export function fmt(template, fields) {
  return template.replace(/\{(\w+)(![rs])?(?::([^}]*))?\}/g, (all, name, conv, spec) => {
    if (!(name in fields)) return all;
    const v = fields[name];
    if (conv === "!r") return typeof v === "string" ? `'${v}'` : String(v);
    if (!spec || typeof v !== "number") return String(v);
    const m = /^\.?(\d*)([gfe%])$/.exec(spec);
    if (!m) return String(v);
    const p = m[1] === "" ? 6 : Number(m[1]);
    if (!Number.isFinite(v)) return Number.isNaN(v) ? "nan" : v > 0 ? "inf" : "-inf";
    if (m[2] === "f") return v.toFixed(p);
    if (m[2] === "%") return (v * 100).toFixed(p) + "%";
    if (m[2] === "e") return v.toExponential(p).replace(/e([+-])(\d)$/, "e$10$2");
    const g = Number(v.toPrecision(Math.max(p, 1)));
    const e = g === 0 ? 0 : Math.floor(Math.log10(Math.abs(g)));
    if (e < -4 || e >= Math.max(p, 1)) return g.toExponential(Math.max(p, 1) - 1).replace(/\.?0+e/, "e").replace(/e([+-])(\d)$/, "e$10$2");
    return String(g);
  });
}

// ---- scales and panels -----------------------------------------------------------------------------
const logScale = (lo, hi, a, b) => (v) => a + (Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)) * (b - a);
const linScale = (lo, hi, a, b) => (v) => a + (v - lo) / (hi - lo) * (b - a);

function panelBox(rect, title) {
  const left = 58, right = title === "sweep" ? 58 : 14, top = 24, bottom = 40;
  return { x0: rect.x + left, x1: rect.x + rect.w - right, y0: rect.y + top, y1: rect.y + rect.h - bottom };
}

function frame(ctx, box, title, xlabel, ylabel) {
  ctx.strokeStyle = "#444"; ctx.lineWidth = 1;
  ctx.strokeRect(box.x0, box.y0, box.x1 - box.x0, box.y1 - box.y0);
  ctx.fillStyle = "#111"; ctx.font = FONT; ctx.textAlign = "center"; ctx.textBaseline = "alphabetic";
  ctx.fillText(title, (box.x0 + box.x1) / 2, box.y0 - 7);
  ctx.fillText(xlabel, (box.x0 + box.x1) / 2, box.y1 + 34);
  ctx.save(); ctx.translate(box.x0 - 44, (box.y0 + box.y1) / 2); ctx.rotate(-Math.PI / 2);
  ctx.fillText(ylabel, 0, 0); ctx.restore();
}

function logTicks(ctx, box, lo, hi, axis, scale, every = 1) {
  ctx.font = SMALL; ctx.fillStyle = "#333"; ctx.strokeStyle = "rgba(0,0,0,0.12)";
  for (let e = Math.ceil(Math.log10(lo)); e <= Math.floor(Math.log10(hi)); e += every) {
    const p = scale(10 ** e), text = e === 0 ? "1" : `1e${e}`;
    ctx.beginPath();
    if (axis === "x") { ctx.moveTo(p, box.y0); ctx.lineTo(p, box.y1); ctx.stroke(); ctx.textAlign = "center"; ctx.fillText(text, p, box.y1 + 15); }
    else { ctx.moveTo(box.x0, p); ctx.lineTo(box.x1, p); ctx.stroke(); ctx.textAlign = "right"; ctx.fillText(text, box.x0 - 4, p + 4); }
  }
}

function linTicks(ctx, box, lo, hi, axis, scale, n = 5, side = "left") {
  ctx.font = SMALL; ctx.fillStyle = "#333";
  const step = niceStep((hi - lo) / n);
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) {
    const p = scale(v), text = String(Number(v.toFixed(6)));
    if (axis === "x") { ctx.textAlign = "center"; ctx.fillText(text, p, box.y1 + 15); }
    else if (side === "left") { ctx.textAlign = "right"; ctx.fillText(text, box.x0 - 4, p + 4); }
    else { ctx.textAlign = "left"; ctx.fillText(text, box.x1 + 4, p + 4); }
  }
}

function niceStep(raw) {
  const e = 10 ** Math.floor(Math.log10(raw)), f = raw / e;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * e;
}

// ---- the view ------------------------------------------------------------------------------------------
class LabView {
  constructor(model, el) {
    this.model = model; this.el = el; this.cache = new Map(); this.preview = null; this.alive = true;
    this.build();
    const update = () => { clearTimeout(this.quiet); this.sync(); };
    for (const name of ["payload", "state", "tries", "status", "message", "challenge", "busy", "labels", "live"]) {
      model.on(`change:${name}`, update);
    }
    model.on("msg:custom", (msg) => { if (msg && msg.type === "alive") { clearTimeout(this.aliveTimer); this.setAlive(true); } });
    this.sync();
    this.resize = new ResizeObserver(() => this.draw());
    this.resize.observe(this.canvasBox);
    if (model.get("mode") === "kernel") {  // a saved notebook reopened with no kernel must not look live
      this.setAlive(false, true);
      model.send({ action: "hello" });
      this.aliveTimer = setTimeout(() => this.setAlive(false), 6000);
    }
  }

  L(key) { return (this.model.get("labels") || {})[key] ?? key; }

  build() {
    const el = this.el, L = (k) => this.L(k);
    el.classList.add("lr-lab");
    el.innerHTML = "";
    const row = (cls) => { const d = document.createElement("div"); d.className = `lr-lab-row ${cls || ""}`; el.appendChild(d); return d; };
    const button = (parent, cls, text, title) => {
      const b = document.createElement("button"); b.type = "button"; b.className = cls; b.textContent = text;
      if (title) b.title = title; parent.appendChild(b); return b;
    };
    this.banner = row("lr-lab-banner"); this.banner.hidden = true;
    const r1 = row();
    const lrLabel = document.createElement("label"); lrLabel.className = "lr-lab-lr-label"; lrLabel.textContent = L("learning rate");
    this.slider = document.createElement("input"); this.slider.type = "range"; this.slider.className = "lr-lab-slider";
    this.slider.min = "0"; this.slider.step = "1"; lrLabel.appendChild(this.slider); r1.appendChild(lrLabel);
    this.readout = document.createElement("span"); this.readout.className = "lr-lab-readout"; r1.appendChild(this.readout);
    this.text = document.createElement("input"); this.text.type = "text"; this.text.className = "lr-lab-lr-text";
    this.text.placeholder = L("type lr, Enter"); this.text.title = L("type a learning rate and press Enter"); r1.appendChild(this.text);
    this.snap = button(r1, "lr-lab-snap", L("snap to best"), L("the learning rate that converges in the fewest steps"));
    const r2 = row();
    this.optimizerButtons = {};
    const group = document.createElement("span"); group.className = "lr-lab-optimizer"; r2.appendChild(group);
    for (const [name, tip] of [["SGD", "plain gradient descent (nn.SGD)"], ["Momentum", "heavy-ball momentum (nn.Momentum) with β"], ["Adam", "nn.Adam, defaults"]]) {
      this.optimizerButtons[name] = button(group, `lr-lab-optimizer-${name.toLowerCase()}`, name, L(tip));
    }
    const mLabel = document.createElement("label"); mLabel.className = "lr-lab-momentum-label"; mLabel.textContent = L("momentum β") + " ";
    this.momentum = document.createElement("input"); this.momentum.type = "range"; this.momentum.className = "lr-lab-momentum";
    this.momentum.min = "0"; this.momentum.max = "0.99"; this.momentum.step = "0.01"; mLabel.appendChild(this.momentum);
    this.momentumOut = document.createElement("span"); mLabel.appendChild(this.momentumOut); r2.appendChild(mLabel);
    const sLabel = document.createElement("label"); sLabel.className = "lr-lab-steps-label"; sLabel.textContent = L("steps") + " ";
    this.steps = document.createElement("select"); this.steps.className = "lr-lab-steps"; sLabel.appendChild(this.steps); r2.appendChild(sLabel);
    const r3 = row();
    const presetsLabel = document.createElement("span"); presetsLabel.textContent = L("presets:"); r3.appendChild(presetsLabel);
    this.presetButtons = {};
    for (const name of ["too small", "good", "oscillating", "diverging"]) {
      this.presetButtons[name] = button(r3, `lr-lab-preset lr-lab-preset-${name.replace(" ", "-")}`, L(name), L(`tip:${name}`));
    }
    this.clear = button(r3, "lr-lab-clear", L("clear earlier tries"));
    // keys typed into the lab's inputs are theirs: JupyterLab's notebook shortcuts (arrows, Home, End move
    // between cells in command mode) must not take them (Lumino skips elements marked so)
    for (const input of [this.slider, this.text, this.momentum, this.steps]) input.setAttribute("data-lm-suppress-shortcuts", "true");
    this.status = row("lr-lab-status"); this.message = row("lr-lab-message"); this.challenge = row("lr-lab-challenge");
    const body = row("lr-lab-body");
    this.canvasBox = document.createElement("div"); this.canvasBox.className = "lr-lab-figure"; body.appendChild(this.canvasBox);
    this.canvas = document.createElement("canvas"); this.canvas.setAttribute("role", "img"); this.canvasBox.appendChild(this.canvas);
    this.triesList = document.createElement("div"); this.triesList.className = "lr-lab-tries"; body.appendChild(this.triesList);

    const act = (action) => {
      if (!this.alive) return;
      this.model.send(action);
      // a kernel that died or restarted never answers: if nothing comes back, ask whether it is there
      if (this.model.get("mode") === "kernel") {
        clearTimeout(this.quiet);
        this.quiet = setTimeout(() => {
          if (this.model.get("busy")) return;
          this.model.send({ action: "hello" });
          this.aliveTimer = setTimeout(() => this.setAlive(false), 6000);
        }, 8000);
      }
    };
    this.slider.addEventListener("input", () => { this.preview = Number(this.slider.value); this.draw(); this.showPreview(); });
    this.slider.addEventListener("change", () => { const i = Number(this.slider.value); this.preview = i; act({ action: "slider", index: i }); });
    this.text.addEventListener("keydown", (e) => { if (e.key === "Enter") act({ action: "text", text: this.text.value }); });
    this.snap.addEventListener("click", () => act({ action: "snap" }));
    for (const [name, b] of Object.entries(this.optimizerButtons)) b.addEventListener("click", () => act({ action: "set", optimizer: name }));
    this.momentum.addEventListener("input", () => { this.momentumOut.textContent = Number(this.momentum.value).toFixed(2); });
    this.momentum.addEventListener("change", () => act({ action: "set", momentum: Number(this.momentum.value) }));
    this.steps.addEventListener("change", () => act({ action: "set", steps: Number(this.steps.value) }));
    for (const [name, b] of Object.entries(this.presetButtons)) b.addEventListener("click", () => act({ action: "preset", name }));
    this.clear.addEventListener("click", () => act({ action: "clear" }));
  }

  setAlive(alive, waiting = false) {
    this.alive = alive;
    if (alive) clearTimeout(this.aliveTimer);
    this.banner.hidden = alive && !this.model.get("live");
    if (!alive) this.banner.textContent = waiting ? this.L("connecting to the kernel...") :
      this.L("This lab is not live: its kernel is not running (a saved notebook). Run its cell to bring it back.");
    else if (this.model.get("live")) this.banner.textContent = this.model.get("live");
    this.el.classList.toggle("lr-lab-dead", !alive && !waiting);
    for (const c of this.el.querySelectorAll("button, input, select")) c.disabled = !alive || (c === this.momentum && this.state().optimizer !== "Momentum");
  }

  state() { return this.model.get("state") || {}; }

  sweep() {
    const blob = this.model.get("payload");
    if (!blob || !(blob.byteLength ?? blob.length)) return null;
    if (blob !== this.blob) { this.blob = blob; this.current = decode(blob); this.cache.set(this.current.key, this.current); this.background = null; }
    return this.current;
  }

  sync() {
    const st = this.state(), sweep = this.sweep(), L = (k) => this.L(k);
    if (sweep) {
      this.slider.max = String(sweep.lrs.length - 1);
      const i = st.index ?? 0;
      if (document.activeElement !== this.slider || this.preview === null) this.slider.value = String(i);
      this.preview = null;
      this.readout.textContent = fmt("{lr:.3g}", { lr: sweep.lrs[Number(this.slider.value)] });
    }
    if (document.activeElement !== this.text || this.textShown !== st.lr) { this.text.value = st.lr !== undefined ? fmt("{lr:.4g}", { lr: st.lr }) : ""; this.textShown = st.lr; }
    for (const [name, b] of Object.entries(this.optimizerButtons)) b.classList.toggle("lr-lab-on", name === st.optimizer);
    this.momentum.value = String(st.momentum ?? 0.9); this.momentumOut.textContent = Number(st.momentum ?? 0.9).toFixed(2);
    const options = this.model.get("steps_options") || [st.steps];
    if (this.steps.options.length !== options.length || [...this.steps.options].some((o, k) => Number(o.value) !== options[k])) {
      this.steps.innerHTML = options.map((s) => `<option value="${s}">${s}</option>`).join("");
    }
    this.steps.value = String(st.steps);
    this.setText(this.status, this.model.get("status"), this.model.get("alarm") ? DIVERGED_COLOR : "");
    this.setText(this.message, this.model.get("message"), this.model.get("message_error") ? DIVERGED_COLOR : "#8a6d00");
    const ch = this.model.get("challenge") || {};
    this.challenge.innerHTML = "";
    if (ch.text) {
      const b = document.createElement("b"); b.textContent = L("Challenge:") + " "; this.challenge.appendChild(b);
      this.challenge.appendChild(document.createTextNode(ch.text + " "));
      const r = document.createElement("span"); r.textContent = (ch.met ? "✓ " : "") + (ch.result || ""); if (ch.met) r.style.color = "green";
      this.challenge.appendChild(r);
    }
    this.el.classList.toggle("lr-lab-busy", !!this.model.get("busy"));
    this.listTries();
    this.setAlive(this.alive);
    this.draw();
  }

  setText(node, text, color) { node.textContent = text || ""; node.style.color = color || ""; }

  showPreview() {  // the status line of the position being dragged over, before the host hears of it
    const sweep = this.sweep(); if (!sweep) return;
    const i = this.preview, st = this.state();
    this.readout.textContent = fmt("{lr:.3g}", { lr: sweep.lrs[i] });
    const beta = st.optimizer === "Momentum" ? ` β=${Number(st.momentum).toFixed(2)}` : "";
    this.setText(this.status, fmt(this.L("lr={lr:.4g} {optimizer}{beta}, {steps} steps: {text}"),
      { lr: sweep.lrs[i], optimizer: st.optimizer, beta, steps: sweep.steps, text: sweep.texts[i] }),
      sweep.kinds[i] <= 1 ? DIVERGED_COLOR : "");
  }

  listTries(shown = 14) {
    const tries = this.model.get("tries") || [];
    this.triesList.innerHTML = "";
    if (!tries.length) return;
    const title = document.createElement("b"); title.textContent = this.L("tries (newest last)"); this.triesList.appendChild(title);
    if (tries.length > shown) { const d = document.createElement("div"); d.textContent = fmt(this.L("... and {hidden} earlier"), { hidden: tries.length - shown }); this.triesList.appendChild(d); }
    for (const one of tries.slice(-shown)) {
      const d = document.createElement("div"); d.className = "lr-lab-try";
      const dot = document.createElement("span"); dot.textContent = "● "; dot.style.color = one.color; d.appendChild(dot);
      d.appendChild(document.createTextNode(one.row)); this.triesList.appendChild(d);
    }
  }

  runOfTry(one) {
    if (one.run) { if (!one._run) one._run = runOf(decode(Uint8Array.from(atob(one.run), (c) => c.charCodeAt(0))), 0); return one._run; }
    const sweep = this.cache.get(one.key);
    return sweep && one.index < sweep.lrs.length ? runOf(sweep, one.index) : null;
  }

  // ---- drawing ---------------------------------------------------------------------------------------
  draw() {
    const sweep = this.sweep(), surface = this.model.get("surface");
    if (!sweep || !surface) return;
    const width = Math.max(320, Math.min(this.canvasBox.clientWidth || 720, 900));
    const narrow = width < 560, h = narrow ? 250 : 240, height = 4 * h / (narrow ? 1 : 2);
    const dpr = window.devicePixelRatio || 1;
    if (this.canvas.width !== Math.round(width * dpr) || this.canvas.height !== Math.round(height * dpr)) {
      this.canvas.width = Math.round(width * dpr); this.canvas.height = Math.round(height * dpr);
      this.canvas.style.width = `${width}px`; this.canvas.style.height = `${height}px`; this.background = null;
    }
    const ctx = this.canvas.getContext("2d", { willReadFrequently: true });
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const w = narrow ? width : width / 2;
    const rects = [0, 1, 2, 3].map((k) => narrow ? { x: 0, y: k * h, w, h } : { x: (k % 2) * w, y: Math.floor(k / 2) * h, w, h });
    const tries = this.model.get("tries") || [];
    const st = this.state();
    const key = `${sweep.key}|${width}|${dpr}|${tries.slice(0, -1).map((t) => t.id).join(",")}`;
    if (this.backgroundKey !== key || !this.background) {
      ctx.clearRect(0, 0, width, height); ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, width, height);
      this.drawAxes(ctx, rects, sweep, surface);
      tries.slice(0, -1).forEach((one) => { const run = this.runOfTry(one); if (run) this.drawRun(ctx, rects, surface, sweep, run, one.color, false); });
      this.background = ctx.getImageData(0, 0, this.canvas.width, this.canvas.height); this.backgroundKey = key;
    } else {
      ctx.putImageData(this.background, 0, 0);
    }
    let current = null, color = "#1f77b4";
    if (this.preview !== null) { current = runOf(sweep, this.preview); const last = tries[tries.length - 1]; color = last ? last.color : color; }
    else if (tries.length) { const last = tries[tries.length - 1]; current = this.runOfTry(last); color = last.color; }
    if (current) this.drawRun(ctx, rects, surface, sweep, current, color, true);
    this.canvas.setAttribute("aria-label", current ? `${current.label}: ${current.text}` : "");
    this.canvas.dataset.drawn = String((Number(this.canvas.dataset.drawn) || 0) + 1);
  }

  drawAxes(ctx, rects, sweep, surface) {
    const L = (k) => this.L(k), [llo, lhi] = surface.loss_limits;
    // 1. loss per step
    let box = this.boxes = rects.map((r, k) => panelBox(r, k === 2 ? "sweep" : ""));
    let b = box[0];
    const ly = logScale(llo, lhi, b.y1, b.y0);
    frame(ctx, b, L("loss per step"), L("step"), L("loss (log scale)"));
    logTicks(ctx, b, llo, lhi, "y", ly, 2);
    linTicks(ctx, b, 0, sweep.steps, "x", linScale(0, sweep.steps, b.x0, b.x1));
    ctx.setLineDash([5, 4]); ctx.strokeStyle = "#888"; ctx.beginPath();
    const m = ly(Math.max(surface.min_loss, llo)); ctx.moveTo(b.x0, m); ctx.lineTo(b.x1, m); ctx.stroke(); ctx.setLineDash([]);
    // 2. the (w, b) path over the bowl
    b = box[1];
    const [[w0, w1], [b0, b1]] = surface.window, sx = linScale(w0, w1, b.x0, b.x1), sy = linScale(b0, b1, b.y1, b.y0);
    this.drawBowl(ctx, b, surface, sx, sy);
    frame(ctx, b, L("(w, b) path over the loss contours"), L("weight w"), L("bias b"));
    linTicks(ctx, b, w0, w1, "x", sx); linTicks(ctx, b, b0, b1, "y", sy);
    // 3. the sweep
    b = box[2];
    const [rlo, rhi] = surface.lr_limits, rx = logScale(rlo, rhi, b.x0, b.x1), fy = logScale(llo, lhi, b.y1, b.y0);
    const sy2 = linScale(0, sweep.steps * 1.05, b.y1, b.y0);
    frame(ctx, b, fmt(L("sweep: {label}, {steps} steps"), { label: sweep.label, steps: sweep.steps }) +
      (sweep.optimizer === "Adam" ? L(" (no closed-form bound)") : ""), L("learning rate (log scale)"), L("final loss"));
    logTicks(ctx, b, rlo, rhi, "x", rx); logTicks(ctx, b, llo, lhi, "y", fy, 2);
    linTicks(ctx, b, 0, sweep.steps, "y", sy2, 4, "right");
    ctx.save(); ctx.translate(b.x1 + 44, (b.y0 + b.y1) / 2); ctx.rotate(Math.PI / 2); ctx.fillStyle = "#2ca02c"; ctx.font = FONT; ctx.textAlign = "center";
    ctx.fillText(L("steps to converge"), 0, 0); ctx.restore();
    ctx.save(); ctx.beginPath(); ctx.rect(b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0); ctx.clip();
    const k = sweep.lrs.length, finals = new Float64Array(k);
    for (let i = 0; i < k; i++) finals[i] = sweep.losses[i * sweep.steps + sweep.steps - 1];
    ctx.strokeStyle = "#1f77b4"; ctx.lineWidth = 1.6; ctx.beginPath(); let pen = false;
    for (let i = 0; i < k; i++) {
      const v = finals[i], ok = Number.isFinite(v) && v <= lhi;
      if (!ok) { pen = false; continue; }
      const x = rx(sweep.lrs[i]), y = fy(Math.max(v, llo)); if (pen) ctx.lineTo(x, y); else ctx.moveTo(x, y); pen = true;
    }
    ctx.stroke();
    ctx.strokeStyle = DIVERGED_COLOR; ctx.lineWidth = 1;
    for (let i = 0; i < k; i++) if (sweep.kinds[i] <= 1) { const x = rx(sweep.lrs[i]); const v = finals[i]; const y = fy(Number.isFinite(v) ? Math.min(Math.max(v, llo), lhi) : lhi); ctx.beginPath(); ctx.moveTo(x, y - 4); ctx.lineTo(x, y + 4); ctx.stroke(); }
    ctx.strokeStyle = "#2ca02c"; ctx.lineWidth = 1.6; ctx.beginPath(); pen = false;
    for (let i = 0; i < k; i++) {
      const c = sweep.converge[i]; if (c < 0) { pen = false; continue; }
      const x = rx(sweep.lrs[i]), y = sy2(c); if (pen) ctx.lineTo(x, y); else ctx.moveTo(x, y); pen = true;
    }
    ctx.stroke();
    for (const [lr, label, color] of sweep.bounds) {
      const x = rx(lr), c = color === "crimson" ? DIVERGED_COLOR : "#595959";
      ctx.strokeStyle = c; ctx.setLineDash(color === "crimson" ? [6, 4] : [2, 3]); ctx.lineWidth = 1.3;
      ctx.beginPath(); ctx.moveTo(x, b.y0); ctx.lineTo(x, b.y1); ctx.stroke(); ctx.setLineDash([]);
      ctx.fillStyle = c; ctx.font = SMALL; ctx.textAlign = "right"; ctx.fillText(L(label) + " ", x, color === "crimson" ? b.y0 + 14 : b.y0 + 30);
    }
    ctx.restore();
    // 4. the fitted line
    b = box[3];
    const xs = surface.x, ys = surface.y;
    const xlo = Math.min(...xs), xhi = Math.max(...xs), ylo = Math.min(...ys), yhi = Math.max(...ys), span = (yhi - ylo) || 1;
    this.fit = { sx: linScale(xlo, xhi, b.x0 + 4, b.x1 - 4), sy: linScale(ylo - 0.6 * span, yhi + 0.6 * span, b.y1, b.y0), xlo, xhi };
    frame(ctx, b, L("the fitted line w·x + b"), "x", "y");
    linTicks(ctx, b, xlo, xhi, "x", this.fit.sx, 4); linTicks(ctx, b, ylo - 0.6 * span, yhi + 0.6 * span, "y", this.fit.sy, 4);
    ctx.fillStyle = "#8c8c8c";
    for (let i = 0; i < xs.length; i++) { ctx.beginPath(); ctx.arc(this.fit.sx(xs[i]), this.fit.sy(ys[i]), 2, 0, 2 * Math.PI); ctx.fill(); }
    const [ow, ob] = surface.optimum;
    ctx.strokeStyle = "#b8860b"; ctx.setLineDash([6, 4]); ctx.lineWidth = 1.3; ctx.beginPath();
    ctx.moveTo(this.fit.sx(xlo), this.fit.sy(ow * xlo + ob)); ctx.lineTo(this.fit.sx(xhi), this.fit.sy(ow * xhi + ob)); ctx.stroke(); ctx.setLineDash([]);
    ctx.font = SMALL; ctx.textAlign = "left"; ctx.fillStyle = "#8c8c8c"; ctx.fillText("● " + L("data"), b.x0 + 6, b.y0 + 16);
    ctx.fillStyle = "#b8860b"; ctx.fillText("-- " + L("best fit"), b.x0 + 6, b.y0 + 31);
  }

  drawBowl(ctx, b, surface, sx, sy) {
    const [[w0, w1], [b0, b1]] = surface.window, H = surface.hessian, [ow, ob] = surface.optimum, n = 60;
    const loss = (w, bb) => { const dw = w - ow, db = bb - ob; return surface.min_loss + 0.5 * (H[0][0] * dw * dw + 2 * H[0][1] * dw * db + H[1][1] * db * db); };
    const cw = (b.x1 - b.x0) / n, ch = (b.y1 - b.y0) / n;
    const lo = Math.log10(Math.max(surface.min_loss, 1e-12)), hi = Math.log10(Math.max(loss(w0, b0), loss(w1, b1), loss(w0, b1), loss(w1, b0)));
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
      const w = w0 + (i + 0.5) / n * (w1 - w0), bb = b1 - (j + 0.5) / n * (b1 - b0);
      const f = Math.min(Math.max((Math.log10(loss(w, bb)) - lo) / (hi - lo), 0), 1);
      ctx.fillStyle = `rgb(${Math.round(120 + 135 * f)},${Math.round(160 + 95 * f)},${Math.round(215 + 40 * f)})`;
      ctx.fillRect(b.x0 + i * cw, b.y0 + j * ch, cw + 0.6, ch + 0.6);
    }
    ctx.save(); ctx.beginPath(); ctx.rect(b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0); ctx.clip();
    const [l0, l1] = surface.eigenvalues, V = surface.eigenvectors;  // columns: the flat and the steep direction
    ctx.strokeStyle = "rgba(60,60,60,0.6)"; ctx.lineWidth = 0.8;
    for (let k = 0; k < 10; k++) {
      const level = surface.min_loss * 10 ** (0.5 + k * 0.5), d = 2 * (level - surface.min_loss);
      if (!(d > 0)) continue;
      const r0 = Math.sqrt(d / l0), r1 = Math.sqrt(d / l1);
      ctx.beginPath();
      for (let a = 0; a <= 64; a++) {
        const t = a / 64 * 2 * Math.PI, u = r0 * Math.cos(t), v = r1 * Math.sin(t);
        const x = sx(ow + u * V[0][0] + v * V[0][1]), y = sy(ob + u * V[1][0] + v * V[1][1]);
        if (a) ctx.lineTo(x, y); else ctx.moveTo(x, y);
      }
      ctx.stroke();
    }
    [["flat", "#333", 0], ["steep", "#8b0000", 1]].forEach(([name, color, i]) => {
      const vx = V[0][i] * 0.9, vy = V[1][i] * 0.9, x0 = sx(ow), y0 = sy(ob), x1 = sx(ow + vx), y1 = sy(ob + vy);
      ctx.strokeStyle = color; ctx.fillStyle = color; ctx.lineWidth = 1.6;
      ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke();
      const a = Math.atan2(y1 - y0, x1 - x0);
      ctx.beginPath(); ctx.moveTo(x1, y1); ctx.lineTo(x1 - 8 * Math.cos(a - 0.4), y1 - 8 * Math.sin(a - 0.4)); ctx.lineTo(x1 - 8 * Math.cos(a + 0.4), y1 - 8 * Math.sin(a + 0.4)); ctx.fill();
      ctx.font = SMALL; ctx.textAlign = vx >= 0 ? "left" : "right";
      ctx.fillText(` ${this.L(name)}: λ=${surface.eigenvalues[i].toFixed(2)} `, sx(ow + 1.05 * vx), sy(ob + 1.05 * vy) + 4);
    });
    star(ctx, sx(ow), sy(ob), 8);
    ctx.restore();
  }

  drawRun(ctx, rects, surface, sweep, run, color, current) {
    const box = this.boxes, [llo, lhi] = surface.loss_limits;
    ctx.globalAlpha = current ? 1 : 0.4; ctx.strokeStyle = color; ctx.fillStyle = color;
    // loss per step: a loss that leaves the panel (above the top, inf, NaN) ends at the top with ▲
    let b = box[0];
    const sx = linScale(0, sweep.steps, b.x0, b.x1), ly = logScale(llo, lhi, b.y1, b.y0);
    ctx.save(); ctx.beginPath(); ctx.rect(b.x0 - 1, b.y0 - 10, b.x1 - b.x0 + 2, b.y1 - b.y0 + 11); ctx.clip();
    ctx.lineWidth = current ? 2.2 : 1; ctx.beginPath(); let off = null;
    const n = Math.min(run.losses.length, sweep.steps);
    for (let k = 0; k < n; k++) {
      const v = run.losses[k];
      if (!Number.isFinite(v) || v > lhi) { off = k; ctx.lineTo(sx(k), ly(lhi)); break; }
      const y = ly(Math.max(v, llo)); if (k) ctx.lineTo(sx(k), y); else ctx.moveTo(sx(k), y);
    }
    ctx.stroke();
    if (off !== null) triangle(ctx, sx(off), ly(lhi), 7);
    ctx.restore();
    // the path over the bowl: drawn up to where it leaves the view for good (✖)
    b = box[1];
    const [[w0, w1], [b0, b1]] = surface.window, px = linScale(w0, w1, b.x0, b.x1), py = linScale(b0, b1, b.y1, b.y0);
    const inside = (w, bb) => w >= w0 && w <= w1 && bb >= b0 && bb <= b1;
    const pts = run.path, m = pts.length / 2;
    let lastIn = -1, allFinite = true;
    for (let k = 0; k < m; k++) { const w = pts[2 * k], bb = pts[2 * k + 1]; if (!Number.isFinite(w) || !Number.isFinite(bb)) { allFinite = false; break; } if (inside(w, bb)) lastIn = k; }
    const endsInside = allFinite && lastIn === m - 1;
    ctx.save(); ctx.beginPath(); ctx.rect(b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0); ctx.clip();
    ctx.lineWidth = current ? 1.5 : 0.8; ctx.beginPath();
    const upto = endsInside ? m - 1 : Math.min(lastIn + 1, m - 1);
    for (let k = 0; k <= upto; k++) {
      let w = pts[2 * k], bb = pts[2 * k + 1];
      if (!Number.isFinite(w) || !Number.isFinite(bb)) break;
      w = Math.max(Math.min(w, 1e4), -1e4); bb = Math.max(Math.min(bb, 1e4), -1e4);
      if (k) ctx.lineTo(px(w), py(bb)); else ctx.moveTo(px(w), py(bb));
    }
    ctx.stroke();
    if (current) for (let k = 0; k <= upto && k < 200; k++) { const w = pts[2 * k], bb = pts[2 * k + 1]; if (inside(w, bb)) { ctx.beginPath(); ctx.arc(px(w), py(bb), 1.8, 0, 2 * Math.PI); ctx.fill(); } }
    if (endsInside) { ctx.beginPath(); ctx.arc(px(pts[2 * (m - 1)]), py(pts[2 * m - 1]), 4.5, 0, 2 * Math.PI); ctx.fill(); }
    else if (lastIn >= 0) cross(ctx, px(pts[2 * lastIn]), py(pts[2 * lastIn + 1]), 7, color);
    ctx.restore();
    if (current) {
      // the sweep's marker at this learning rate
      b = box[2];
      const rx = logScale(surface.lr_limits[0], surface.lr_limits[1], b.x0, b.x1)(run.lr);
      ctx.lineWidth = 2; ctx.beginPath(); ctx.moveTo(rx, b.y0); ctx.lineTo(rx, b.y1); ctx.stroke();
      // the fitted line of the final (w, b)
      b = box[3];
      const w = pts[2 * (m - 1)], bb = pts[2 * m - 1], f = this.fit;
      if (Number.isFinite(w) && Number.isFinite(bb) && Math.abs(w) < 1e4 && Math.abs(bb) < 1e4) {
        ctx.save(); ctx.beginPath(); ctx.rect(b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0); ctx.clip();
        ctx.lineWidth = 2.2; ctx.beginPath(); ctx.moveTo(f.sx(f.xlo), f.sy(w * f.xlo + bb)); ctx.lineTo(f.sx(f.xhi), f.sy(w * f.xhi + bb)); ctx.stroke(); ctx.restore();
      }
      // the run's name (top right) and, for a diverging run, its verdict's first words (bottom left)
      b = box[0];
      ctx.font = "bold " + FONT; ctx.textAlign = "right"; ctx.fillText(run.label, b.x1 - 6, b.y0 + 16);
      if (run.kind === "diverged" || run.kind === "diverging") {
        ctx.fillStyle = DIVERGED_COLOR; ctx.font = FONT; ctx.textAlign = "left";
        ctx.fillText(run.headline, b.x0 + 6, b.y1 - 8);
      }
    }
    ctx.globalAlpha = 1;
  }
}

function star(ctx, x, y, r) {
  ctx.fillStyle = "#ffd700"; ctx.strokeStyle = "#000"; ctx.lineWidth = 1; ctx.beginPath();
  for (let k = 0; k < 10; k++) { const a = -Math.PI / 2 + k * Math.PI / 5, rr = k % 2 ? r * 0.45 : r; ctx.lineTo(x + rr * Math.cos(a), y + rr * Math.sin(a)); }
  ctx.closePath(); ctx.fill(); ctx.stroke();
}
function triangle(ctx, x, y, r) { ctx.beginPath(); ctx.moveTo(x, y - r); ctx.lineTo(x - r, y + r * 0.6); ctx.lineTo(x + r, y + r * 0.6); ctx.closePath(); ctx.fill(); }
function cross(ctx, x, y, r, color) {
  ctx.strokeStyle = "#000"; ctx.lineWidth = 4; ctx.beginPath(); ctx.moveTo(x - r, y - r); ctx.lineTo(x + r, y + r); ctx.moveTo(x + r, y - r); ctx.lineTo(x - r, y + r); ctx.stroke();
  ctx.strokeStyle = color; ctx.lineWidth = 2.5; ctx.stroke();
}

export function mount(model, el) { const view = new LabView(model, el); el.labView = view; return view; }  // labView: for tests

export default {
  render({ model, el }) {
    const view = mount(model, el);
    return () => { view.resize.disconnect(); clearTimeout(view.quiet); clearTimeout(view.aliveTimer); };  // the view is gone
  },
};
