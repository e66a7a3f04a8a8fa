// memplan's page: reads the daemon's JSON API (the same endpoints schedulers and curl use) and shows the answers
// for people. Plain JavaScript, no build step, nothing fetched from elsewhere. Every value put in the page goes
// through textContent (never innerHTML), so a device or model name can never become markup.
"use strict";

// ----- numbers for people (the rules of codec/mpc_human.c) -------------------------------------------------------

const NBSP = "\u00a0"; // between a number and its unit

function round3(v) {
  if (v === 0 || !isFinite(v)) return v;
  const e = Math.floor(Math.log10(Math.abs(v)));
  const scale = Math.pow(10, 2 - e);
  return Math.round(v * scale) / scale;
}

function count(v) {
  if (!isFinite(v)) return "n/a";
  return Math.round(v).toLocaleString("en-US");
}

function sig3(v) {
  const r = round3(v);
  if (!isFinite(r) || Math.abs(r) >= 1000) return count(r);
  if (r === 0) return "0";
  const e = Math.floor(Math.log10(Math.abs(r)) + 1e-9);
  return r.toFixed(e >= 2 ? 0 : 2 - e);
}

function bytes(b) {
  if (b === null || b === undefined || !isFinite(b)) return "-";
  const a = Math.abs(b);
  if (a < 1000) return count(b) + NBSP + "B";
  const dec = ["B", "kB", "MB", "GB", "TB", "PB"], bin = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let p = 0;
  while (p + 1 < 6 && round3(a / Math.pow(1000, p + 1)) >= 1) p++;
  // a number keeps its unit (no-break spaces): a narrow table cell breaks only before the GiB figure
  return sig3(b / Math.pow(1000, p)) + NBSP + dec[p] + " (" + sig3(b / Math.pow(1024, p)) + NBSP + bin[p] + ")";
}

function si(v, unit) {
  if (v === null || v === undefined || !isFinite(v) || v <= 0) return "-";
  const prefixes = ["", "k", "M", "G", "T", "P", "E"];
  let p = 0;
  while (p + 1 < prefixes.length && round3(v / Math.pow(1000, p)) >= 1000) p++;
  return sig3(v / Math.pow(1000, p)) + NBSP + prefixes[p] + unit;
}

function seconds(s) {
  if (s === null || s === undefined || !isFinite(s)) return "-";
  const a = round3(Math.abs(s));
  if (a < 1e-6) return sig3(s * 1e9) + NBSP + "ns";
  if (a < 1e-3) return sig3(s * 1e6) + NBSP + "us";
  if (a < 1) return sig3(s * 1e3) + NBSP + "ms";
  return sig3(s) + NBSP + "s";
}

// ----- the API ----------------------------------------------------------------------------------------------

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  const r = await fetch(path, init);
  const type = r.headers.get("Content-Type") || "";
  const doc = type.includes("json") ? await r.json() : await r.text();
  return { ok: r.ok, status: r.status, doc: doc };
}

// Every item of a listing, following next_cursor.
async function listAll(path) {
  const items = [];
  let cursor = null;
  for (let page = 0; page < 100; page++) {
    const sep = path.includes("?") ? "&" : "?";
    const r = await api(path + sep + "limit=100" + (cursor ? "&cursor=" + encodeURIComponent(cursor) : ""));
    if (!r.ok) throw new Error(problemText(r.doc));
    items.push(...r.doc.items);
    cursor = r.doc.next_cursor;
    if (!cursor) break;
  }
  return items;
}

function problemText(p) {
  if (!p || typeof p !== "object") return String(p);
  const lines = [p.detail || p.title || "error " + p.status];
  for (const e of p.errors || [])
    if (e.message && e.message !== p.detail) lines.push((e.field ? e.field + ": " : "") + e.message);
  return lines.join("\n");
}

// ----- the page's elements ------------------------------------------------------------------------------------

const $ = (id) => document.getElementById(id);

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function row(cells, cls) {
  const tr = el("tr", null, cls);
  for (const c of cells) tr.appendChild(el("td", c));
  return tr;
}

function showErrors(box, doc) {
  box.replaceChildren();
  for (const line of problemText(doc).split("\n")) box.appendChild(el("div", line));
  box.hidden = false;
}

function option(select, value, text) {
  const o = el("option", text === undefined ? value : text);
  o.value = value;
  select.appendChild(o);
}

// The stored GPUs: every device, or those of kind gpu when the store says kinds.
function gpusOf(devices) {
  return devices.filter((d) => d.kind === undefined || d.kind === null || d.kind === "gpu");
}

// ----- devices: datasheet beside measured ----------------------------------------------------------------------

function renderDevices(devices) {
  const body = $("devices-table").querySelector("tbody");
  const measuredOf = {};
  for (const d of devices)
    if (d.source === "measured" && d.linked_device_id) measuredOf[d.linked_device_id] = d;
  body.replaceChildren();
  for (const d of devices) {
    if (d.source === "measured" && d.linked_device_id && devices.some((x) => x.id === d.linked_device_id))
      continue; // shown beside its datasheet profile
    const m = measuredOf[d.id] || (d.source === "measured" ? d : null);
    const ds = d.source === "measured" && !measuredOf[d.id] ? null : d;
    const peak = (p) => (p && p.peak_flops_per_second ? p.peak_flops_per_second.bf16 : null);
    const tr = row([
      d.id, d.name, m && ds ? d.source + " + measured (" + m.id + ")" : d.source,
      bytes(d.memory_bytes), bytes((m || d).usable_memory_bytes),
      ds ? si(ds.memory_bandwidth_bytes_per_second, "B/s") : "-",
      m ? si(m.memory_bandwidth_bytes_per_second, "B/s") : "-",
      ds ? si(peak(ds), "FLOP/s") : "-", m ? si(peak(m), "FLOP/s") : "-",
      m && m.measured_at ? m.measured_at : "-",
    ]);
    tr.dataset.device = d.id;
    body.appendChild(tr);
  }
}

// ----- capacity --------------------------------------------------------------------------------------------------

async function showCapacity(ev) {
  if (ev) ev.preventDefault();
  const q = new URLSearchParams({
    model: $("capacity-model").value, sequence_length: $("capacity-sequence-length").value,
    weight_dtype: $("capacity-weight-dtype").value, kv_cache_dtype: $("capacity-kv-dtype").value,
  });
  const r = await api("/v1/capacity?" + q.toString());
  const body = $("capacity-table").querySelector("tbody");
  body.replaceChildren();
  if (!r.ok) {
    $("capacity-verdict").textContent = "";
    showErrors($("capacity-errors"), r.doc);
    return;
  }
  $("capacity-errors").hidden = true;
  const items = r.doc.items;
  const fits = items.filter((it) => it.replicas_per_gpu >= 1);
  $("capacity-verdict").textContent = r.doc.model.id + " at " + count(r.doc.request.sequence_length) +
    " tokens per sequence fits on " + fits.length + " of " + items.length + " devices";
  for (const it of items) {
    const ok = it.replicas_per_gpu >= 1;
    const tr = row([
      it.device, bytes(it.capacity_bytes), bytes(it.replica_bytes), bytes(it.kv_cache_bytes_per_sequence),
      ok ? count(it.replicas_per_gpu) : "does not fit", ok ? count(it.max_concurrent_sequences) : "-",
      it.decode_tokens_per_second_per_sequence ? sig3(it.decode_tokens_per_second_per_sequence) : "-",
      it.decode_tokens_per_second_at_max_concurrency ? sig3(it.decode_tokens_per_second_at_max_concurrency) : "-",
      it.decode_bound || "-",
    ], ok ? "" : "nofit");
    tr.dataset.device = it.device;
    body.appendChild(tr);
  }
}

// ----- the plan ------------------------------------------------------------------------------------------------

function kind() {
  return document.querySelector("input[name=kind]:checked").value;
}

function modelSpec() {
  if (document.querySelector("input[name=model-source]:checked").value === "stored") return $("plan-model").value;
  return { hf_config: JSON.parse($("plan-config").value) };
}

function intField(id) {
  const v = $(id).value.trim();
  return /^[0-9]+$/.test(v) ? Number(v) : v; // anything else goes as it is: the API names what is wrong
}

// A count field sent only when it is not 1 (the API's default), so the request stays what the form shows.
function countField(body, key, id) {
  if ($(id).value.trim() !== "1") body[key] = intField(id);
}

function planBody() {
  const body = { model: modelSpec() };
  if ($("plan-device").value) body.device = $("plan-device").value;
  if (kind() === "inference") {
    body.weight_dtype = $("weight_dtype").value.trim();
    body.kv_cache_dtype = $("kv_cache_dtype").value.trim();
    body.batch_size = intField("batch_size");
    body.sequence_length = intField("sequence_length");
    countField(body, "tensor_parallel_size", "tensor_parallel_size");
    if ($("engine").value) body.engine = $("engine").value;
  } else {
    body.precision = $("precision").value;
    body.optimizer = $("optimizer").value;
    body.micro_batch_size = intField("micro_batch_size");
    body.sequence_length = intField("train_sequence_length");
    // left out, the API chooses it as the framework would (and says so in warnings)
    if ($("activation_recomputation").value) body.activation_recomputation = $("activation_recomputation").value;
    body.num_gpus = intField("num_gpus");
    if ($("sharding").value !== "none") body.sharding = $("sharding").value;
    if ($("finetune").value !== "full") {
      body.finetune = $("finetune").value;
      body.lora_rank = intField("lora_rank");
      const targets = $("lora_targets").value.trim();
      if (targets && targets !== "all") body.lora_targets = targets;
    }
    countField(body, "tensor_parallel_size", "train_tensor_parallel_size");
    if ($("sequence_parallel").value === "true") body.sequence_parallel = true;
    countField(body, "pipeline_parallel_size", "pipeline_parallel_size");
    countField(body, "context_parallel_size", "context_parallel_size");
    countField(body, "expert_parallel_size", "expert_parallel_size");
  }
  return body;
}

const INFERENCE_TERMS = [["weights_bytes", "weights"], ["kv_cache_bytes", "KV cache"],
  ["activations_bytes", "activations"], ["overhead_bytes", "overhead (CUDA context)"]];
const TRAINING_TERMS = [["weights_bytes", "weights"], ["gradients_bytes", "gradients"],
  ["master_weights_bytes", "master weights"], ["optimizer_states_bytes", "optimizer states"],
  ["activations_bytes", "activations"], ["logits_bytes", "logits"], ["overhead_bytes", "overhead"]];

function summaryItem(dl, term, value) {
  if (value === undefined || value === null || value === "") return;
  dl.appendChild(el("dt", term));
  dl.appendChild(el("dd", value));
}

function renderPlan(doc, training) {
  const mem = doc.memory || {}, fit = doc.fit, perf = doc.performance, rq = doc.request || {};
  const verdict = $("plan-verdict"), total = $("plan-total"), dl = $("plan-summary");
  dl.replaceChildren();
  if (fit) {
    verdict.textContent = (fit.fits ? "FITS" : "DOES NOT FIT") + " on " + fit.device;
    verdict.className = "verdict " + (fit.fits ? "fits" : "nofit");
  } else {
    verdict.textContent = "Memory only: choose a device for the fit";
    verdict.className = "verdict";
  }
  const host = fit && fit.device_kind === "cpu";
  total.textContent = "total " + count(mem.total_bytes) + " bytes = " + bytes(mem.total_bytes) +
    (host ? " of host memory" : " per GPU") +
    (fit ? (fit.fits ? " of a " : " against a ") + bytes(fit.budget_bytes || fit.capacity_bytes) + " budget" : "");
  total.dataset.bytes = String(mem.total_bytes);
  if (fit) {
    summaryItem(dl, fit.headroom_bytes >= 0 ? "headroom" : "over by", bytes(Math.abs(fit.headroom_bytes)));
    summaryItem(dl, "binding term", fit.binding_term);
    summaryItem(dl, training ? "largest micro-batch" : "largest batch",
      fit.max_batch_size ? count(fit.max_batch_size) + " at " + count(rq.sequence_length) + " tokens" : "none fits");
    summaryItem(dl, "longest sequence", fit.max_sequence_length ? count(fit.max_sequence_length) + " tokens" : "none fits");
    if (!host) { // a CPU is one host: no GPU count
      const g = fit.min_gpus !== undefined ? fit.min_gpus : fit.min_num_gpus;
      summaryItem(dl, "smallest GPU count", g ? count(g) : "none");
    }
  }
  if (perf) {
    summaryItem(dl, "decode step", seconds(perf.decode_step_seconds) + ", " +
      sig3(perf.tokens_per_second_per_sequence) + " tokens/s per sequence, " + sig3(perf.tokens_per_second_total) +
      " in total (" + perf.bound + "-bound floor)");
    summaryItem(dl, "prefill", seconds(perf.prefill_seconds) + " (" + perf.prefill_bound + "-bound floor)");
  }
  const warnings = $("plan-warnings");
  warnings.replaceChildren();
  for (const w of doc.warnings || []) warnings.appendChild(el("li", typeof w === "string" ? w : w.message));
  warnings.hidden = warnings.children.length === 0;
  const command = $("plan-command");
  command.textContent = doc.engine && doc.engine.command ? doc.engine.command : "";
  command.hidden = !command.textContent;
  $("plan-breakdown").querySelector("caption").textContent = host ? "Host memory" : "Memory per GPU";
  const body = $("plan-breakdown").querySelector("tbody");
  body.replaceChildren();
  let sum = 0;
  for (const [key, label] of training ? TRAINING_TERMS : INFERENCE_TERMS) {
    if (mem[key] === undefined || mem[key] === null) continue;
    sum += mem[key];
    const tr = row([label, count(mem[key]), sig3(mem[key] / 1e9), sig3(mem[key] / 1073741824),
      mem.total_bytes ? sig3(100 * mem[key] / mem.total_bytes) + "%" : "-"]);
    tr.dataset.term = key;
    body.appendChild(tr);
  }
  const tr = row(["total", count(mem.total_bytes), sig3(mem.total_bytes / 1e9), sig3(mem.total_bytes / 1073741824),
    "100%"], "total");
  tr.dataset.term = "total_bytes";
  body.appendChild(tr);
  // training: the terms are each one's size and do not all coexist, so they add up to more than the total (the
  // peak phase's); the API's own note says so, and the page says by how much
  const note = $("plan-terms-note");
  if (training && sum !== mem.total_bytes) {
    const coexist = (doc.notes || []).find((n) => n.includes("do not all coexist"));
    note.textContent = "The terms add up to " + bytes(sum) + ", not the total " + bytes(mem.total_bytes) +
      ": they do not all coexist. The total is the peak of the " + (doc.peak_phase || "peak") + " phase" +
      (doc.phases && doc.phases[doc.peak_phase] && doc.phases[doc.peak_phase].moment
        ? " (" + doc.phases[doc.peak_phase].moment + ")" : "") + ", and each share is of that total." +
      (coexist ? " " + coexist : "");
    note.dataset.sumBytes = String(sum);
    note.hidden = false;
  } else {
    note.textContent = "";
    note.hidden = true;
  }
  $("plan-result").hidden = false;
}

// The chart of the plan's device; for an inference plan of a stored model, the model's decode and prefill steps as
// the plan answered them (doc.request: its resolved formats and tensor_parallel_size; the decode step at the last
// token of sequence_length, the prefill of sequence_length tokens, as the plan's performance block takes them).
function showChart(body, doc) {
  const img = $("roofline-chart");
  if (!body.device || !doc.fit) { hideChart(); return; }
  const q = new URLSearchParams();
  const rq = doc.request || {};
  if (typeof body.model === "string" && kind() === "inference") {
    q.set("model", body.model);
    q.set("batch_size", String(rq.batch_size));
    q.set("context_tokens", String(Math.max(rq.sequence_length - 1, 0)));
    q.set("prompt_tokens", String(rq.sequence_length));
    q.set("weight_dtype", rq.weight_dtype === "int4" && rq.int4_scheme ? rq.int4_scheme : rq.weight_dtype);
    q.set("kv_cache_dtype", rq.kv_cache_dtype);
    q.set("compute_dtype", rq.compute_dtype);
    q.set("tensor_parallel_size", String(rq.tensor_parallel_size));
  }
  img.src = "/v1/devices/" + encodeURIComponent(doc.fit.device) + "/roofline.svg" + (q.toString() ? "?" + q : "");
  img.alt = "roofline of " + doc.fit.device + (q.get("model") ? " with " + q.get("model") + "'s operations" : "");
  img.hidden = false;
}

function hideChart() {
  const img = $("roofline-chart");
  img.removeAttribute("src");
  img.hidden = true;
}

// A result of another question is never left on screen: switching inference and training, or the model's source,
// clears it (and its chart and errors).
function clearPlan() {
  $("plan-result").hidden = true;
  $("plan-errors").hidden = true;
  $("plan-total").dataset.bytes = "";
  hideChart();
}

async function submitPlan(ev) {
  ev.preventDefault();
  const errors = $("plan-errors");
  let body;
  try {
    body = planBody();
  } catch (e) {
    showErrors(errors, { detail: "the config.json is not valid JSON: " + e.message });
    return;
  }
  const training = kind() === "training";
  const r = await api(training ? "/v1/plan/training" : "/v1/plan/inference", body);
  if (kind() !== (training ? "training" : "inference")) return; // the form changed while it was asked
  if (!r.ok) {
    clearPlan();
    showErrors(errors, r.doc);
    return;
  }
  errors.hidden = true;
  renderPlan(r.doc, training);
  showChart(body, r.doc);
}

function toggle() {
  const training = kind() === "training";
  $("inference-fields").hidden = training;
  $("training-fields").hidden = !training;
  const stored = document.querySelector("input[name=model-source]:checked").value === "stored";
  $("plan-model").hidden = !stored;
  $("plan-config").hidden = stored;
}

// ----- start ---------------------------------------------------------------------------------------------------

async function start() {
  for (const i of document.querySelectorAll("input[name=kind], input[name=model-source]"))
    i.addEventListener("change", () => { clearPlan(); toggle(); });
  $("plan-form").addEventListener("submit", submitPlan);
  $("capacity-form").addEventListener("submit", showCapacity);
  const health = await api("/v1/health");
  $("health").textContent = health.ok
    ? "memplan " + health.doc.version + ", database " + health.doc.database.path + " (schema " +
      health.doc.database.schema_version + "), GPU: " + (health.doc.gpu.available ? "available" : "none here")
    : "the daemon did not answer /v1/health";
  const [devices, models] = await Promise.all([listAll("/v1/devices"), listAll("/v1/models")]);
  const gpus = gpusOf(devices);
  option($("plan-device"), "", "(none: memory only)");
  for (const d of gpus) option($("plan-device"), d.id, d.id + " - " + d.name);
  for (const m of models) {
    option($("plan-model"), m.id, m.id + " (" + count(m.parameters) + " parameters)");
    option($("capacity-model"), m.id);
  }
  if (models.some((m) => m.id === "llama-3-8b")) {
    $("plan-model").value = "llama-3-8b";
    $("capacity-model").value = "llama-3-8b";
  }
  if (gpus.some((d) => d.id === "h200-sxm-141gb")) $("plan-device").value = "h200-sxm-141gb";
  renderDevices(devices);
  toggle();
  if (models.length) await showCapacity();
  document.body.dataset.ready = "true"; // for the browser test: everything above has loaded
}

start().catch((e) => {
  $("health").textContent = "the page could not load its data: " + e.message;
});
