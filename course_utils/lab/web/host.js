// A model for lab.js where no kernel runs: the website (sweeps computed by MindSpore at build time, read
// from files) and the classroom's page (sweeps computed once per setting by the room's server, fetched over
// HTTP). It answers the page's actions the way LearningRateLab (course_utils/lab/app.py) does in a kernel:
// tries, the status line, presets, snap, the challenge; a test compares the two.
//
//   import { hostModel } from "./host.js";
//   const model = await hostModel({ manifest, fetchPayload: (key) => fetch(`payloads/${key}.bin`) });
//   mount(model, element);        // from lab.js

import { decode, fmt, runOf } from "./lab.js";

const BASE_COLORS = ["#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"];
const COALESCE_MS = 800;

export function colorFor(i) {  // course_utils/lab/figure.py color_for, the same colours in the same order
  if (i < BASE_COLORS.length) return BASE_COLORS[i];
  const h = (0.11 + i * 0.618034) % 1, s = 0.8, v = 0.55 + 0.3 * ((i * 0.382) % 1);
  const k = Math.floor(h * 6), f = h * 6 - k, p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
  const [r, g, b] = [[v, t, p], [q, v, p], [p, v, t], [p, q, v], [t, p, v], [v, p, q]][k % 6];
  return "#" + [r, g, b].map((c) => Math.floor(c * 255).toString(16).padStart(2, "0")).join("");
}

export function settingKey(optimizer, momentum, steps) {  // payload.setting_key
  return `${optimizer}${optimizer === "Momentum" ? `-b${Number(momentum).toFixed(2)}` : ""}-s${steps}`;
}

class HostModel {
  constructor({ manifest, fetchPayload, live = "" }) {
    this.values = { mode: manifest.mode || "static", live, surface: manifest.surface, labels: manifest.labels,
      steps_options: manifest.steps_options, tries: [], status: "", alarm: false, message: "", message_error: false,
      challenge: {}, busy: false, payload: null, state: { ...manifest.state } };
    this.manifest = manifest; this.fetchPayload = fetchPayload; this.handlers = new Map();
    this.sweeps = new Map(); this.blobs = new Map(); this.count = 0; this.ids = 0; this.met = null; this.last = null;
  }

  get(name) { return this.values[name]; }
  set(name, value) { this.values[name] = value; this.emit(`change:${name}`); }
  save_changes() {}
  on(event, fn) { if (!this.handlers.has(event)) this.handlers.set(event, []); this.handlers.get(event).push(fn); }
  off(event, fn) { this.handlers.set(event, (this.handlers.get(event) || []).filter((f) => f !== fn)); }
  emit(event, ...args) { for (const fn of this.handlers.get(event) || []) fn(...args); }
  L(key) { return (this.values.labels || {})[key] ?? key; }
  message(text, error = false) { this.values.message = text || ""; this.values.message_error = !!(error && text); this.emit("change:message"); }

  async sweepFor(key) {
    if (this.sweeps.has(key)) return this.sweeps.get(key);
    const available = this.manifest.keys;
    if (available && !available.includes(key)) {
      throw new Error(fmt(this.L("this page has no sweep for {setting}: it has {settings} (a live lab computes any setting: make lab)"),
        { setting: key, settings: available.join(", ") }));
    }
    this.set("busy", true);
    try {
      const response = await this.fetchPayload(key);
      if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
      const blob = new Uint8Array(await response.arrayBuffer());
      const sweep = decode(blob);
      this.sweeps.set(key, sweep); this.blobs.set(key, blob);
      return sweep;
    } finally { this.set("busy", false); }
  }

  // What LearningRateLab.retrain does: the current setting's column becomes a try.
  async show(state, source = "", note = "") {
    const key = settingKey(state.optimizer, state.momentum, state.steps);
    let sweep;
    try { sweep = await this.sweepFor(key); } catch (err) {
      this.message(fmt(this.L("could not load this setting: {error}"), { error: err.message }), true);
      this.emit("change:state"); return;
    }
    const index = state.index;
    this.values.state = { ...state, lr: sweep.lrs[index] };
    if (this.values.payload !== this.blobs.get(key)) this.values.payload = this.blobs.get(key);
    const run = runOf(sweep, index), now = performance.now(), tries = this.values.tries.slice();
    const last = tries[tries.length - 1];
    let color;
    if (source === "slider" && last && last.source === "slider" && now - this.last < COALESCE_MS) { color = last.color; tries.pop(); }
    else color = colorFor(this.count++);
    this.last = now;
    if (tries.length >= 40) tries.splice(0, tries.length - 20);
    tries.push({ id: ++this.ids, key, index, color, source, row: fmt(this.L(`{run}: ${run.kind}`), { run: run.label }) });
    this.values.tries = tries;
    const beta = state.optimizer === "Momentum" ? ` β=${Number(state.momentum).toFixed(2)}` : "";
    this.values.status = fmt(this.L("lr={lr:.4g} {optimizer}{beta}, {steps} steps: {text}"),
      { lr: run.lr, optimizer: state.optimizer, beta, steps: state.steps, text: run.text });
    this.values.alarm = sweep.kinds[index] <= 1;
    const met = sweep.challenge[index], surface = this.values.surface;
    if (met >= 0 && !this.met) this.met = { label: run.label, step: met };
    const text = fmt(this.L("the loss within {excess:g} of its minimum in at most {steps} steps (any optimizer, β, lr)."),
      { excess: surface.challenge.excess, steps: surface.challenge.steps });
    this.values.challenge = this.met ? { text, met: true, result: fmt(this.L("met by {label} at step {step}"), this.met) }
      : { text, met: false, result: fmt(this.L("Not yet: this try gets within {excess:.1e}."), { excess: sweep.closest[index] ?? Infinity }) };
    this.values.message = note; this.values.message_error = false;
    for (const name of ["payload", "state", "tries", "status", "challenge", "message"]) this.emit(`change:${name}`);
  }

  nearest(sweep, lr) {
    let best = 0;
    for (let i = 1; i < sweep.lrs.length; i++) if (Math.abs(Math.log(sweep.lrs[i] / lr)) < Math.abs(Math.log(sweep.lrs[best] / lr))) best = i;
    return best;
  }

  async send(msg) {
    const state = this.values.state, kind = msg && msg.action;
    const current = this.sweeps.get(settingKey(state.optimizer, state.momentum, state.steps));
    if (kind === "hello") return;
    if (kind === "slider") {
      const i = Number(msg.index);
      if (!(Number.isInteger(i) && current && i >= 0 && i < current.lrs.length)) return this.message(fmt(this.L("the slider has {n} positions, 0 to {last}; got {index!r}"), { n: current ? current.lrs.length : 0, last: current ? current.lrs.length - 1 : 0, index: msg.index }), true);
      if (i === state.index) return;
      return this.show({ ...state, index: i }, "slider");
    }
    if (kind === "snap") return this.show({ ...state, index: current.snap }, "", current.snap_note);
    if (kind === "preset") {
      if (!(msg.name in current.presets)) return this.message(fmt(this.L("preset must be one of {presets} (got {name!r})"), { presets: Object.keys(current.presets).join(", "), name: msg.name }), true);
      return this.show({ ...state, index: current.presets[msg.name] }, "", msg.name === "diverging" ? current.adam_diverging_note : "");
    }
    if (kind === "clear") {
      this.values.tries = this.values.tries.slice(-1); this.emit("change:tries");
      return this.message(this.L("earlier tries cleared"));
    }
    if (kind === "text") {
      const lr = Number(String(msg.text).trim());
      if (!Number.isFinite(lr) || lr <= 0) return this.message(fmt(this.L("not a learning rate: {text!r} (type a positive number such as 0.05)"), { text: String(msg.text) }), true);
      const i = this.nearest(current, lr), shown = current.lrs[i];
      const note = Math.abs(shown / lr - 1) > 5e-4 ? fmt(this.L("{lr:.4g} is between the slider's positions: this page shows the nearest, {nearest:.4g} (a live lab trains any value: make lab)"), { lr, nearest: shown }) : "";
      return this.show({ ...state, index: i }, "", note);
    }
    if (kind === "set") {
      const next = { ...state };
      if (msg.optimizer) next.optimizer = msg.optimizer;
      if (msg.momentum !== undefined) next.momentum = Math.round(Number(msg.momentum) * 100) / 100;
      if (msg.steps !== undefined) next.steps = Number(msg.steps);
      let note = "";
      const keys = this.manifest.keys;
      if (keys && next.optimizer === "Momentum" && !keys.includes(settingKey(next.optimizer, next.momentum, next.steps))) {
        const betas = this.manifest.momentum_options || [];
        const beta = betas.reduce((a, b) => Math.abs(b - next.momentum) < Math.abs(a - next.momentum) ? b : a, betas[0]);
        if (beta !== undefined && beta !== next.momentum) { note = fmt(this.L("this page has sweeps for β = {betas} only: showing β = {beta:.2f} (a live lab computes any β: make lab)"), { betas: betas.map((b) => b.toFixed(2)).join(", "), beta }); next.momentum = beta; }
      }
      const sweep = await this.sweepFor(settingKey(next.optimizer, next.momentum, next.steps)).catch((err) => { this.message(err.message, true); this.emit("change:state"); return null; });
      if (!sweep) return;
      next.index = this.nearest(sweep, current ? current.lrs[state.index] : sweep.lrs[state.index]);
      return this.show(next, "", note);
    }
    return this.message(fmt(this.L("the page sent an action the lab does not know: {kind!r}"), { kind }), true);
  }
}

export async function hostModel(options) {
  const model = new HostModel(options);
  await model.show(model.values.state);
  return model;
}
