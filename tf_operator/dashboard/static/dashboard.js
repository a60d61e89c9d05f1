// tf-operator dashboard: live updates over server-sent events, create, suspend/resume, delete.
// Plain JavaScript, no build step: the server renders HTML; this file swaps it in.
"use strict";

const MAX_LOG_LINES = 500;
const WRITE_HEADERS = { "X-TFJob-Dashboard": "1" };

function setLive(text, ok) {
  const el = document.getElementById("live");
  if (el) { el.textContent = text; el.classList.toggle("ok", ok); }
}

function fragment(html) {
  const t = document.createElement("template");
  t.innerHTML = html.trim();
  return t.content;
}

function cssName(name) { return CSS.escape(name); }

function listStream(section, source) {
  const tbody = section.querySelector("#jobs tbody");
  const empty = section.querySelector("#empty");
  const sync = () => { empty.hidden = tbody.rows.length > 0; };
  source.addEventListener("reset", (e) => {
    tbody.replaceChildren(fragment(JSON.parse(e.data).html)); sync();
  });
  // a row per job of one kind: keyed by <plural>/<name> (a TFJob and a PyTorchJob may share a name)
  source.addEventListener("upsert", (e) => {
    const msg = JSON.parse(e.data);
    const row = fragment(msg.html);
    const old = tbody.querySelector(`tr[data-key="${cssName(msg.key)}"]`);
    if (old) old.replaceWith(row); else tbody.prepend(row);
    sync();
  });
  source.addEventListener("delete", (e) => {
    const old = tbody.querySelector(`tr[data-key="${cssName(JSON.parse(e.data).key)}"]`);
    if (old) old.remove();
    sync();
  });
}

function logBox(pod) {
  const logs = document.getElementById("logs");
  let box = logs.querySelector(`pre[data-pod="${cssName(pod)}"]`);
  if (!box) {
    logs.querySelector(".hint")?.remove();
    const section = document.createElement("section");
    section.className = "log";
    const h = document.createElement("h3");
    h.textContent = pod;
    box = document.createElement("pre");
    box.dataset.pod = pod;
    section.append(h, box);
    const all = [...logs.querySelectorAll("section.log")];
    const after = all.find((s) => s.querySelector("h3").textContent > pod);
    logs.insertBefore(section, after || null);
  }
  return box;
}

function jobStream(section, source) {
  source.addEventListener("detail", (e) => {
    document.getElementById("detail").innerHTML = JSON.parse(e.data).html;
  });
  source.addEventListener("log", (e) => {
    const msg = JSON.parse(e.data);
    const box = logBox(msg.pod);
    const atBottom = box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
    const lines = (box.textContent ? box.textContent.split("\n") : []).concat(msg.lines);
    box.textContent = lines.slice(-MAX_LOG_LINES).join("\n");
    if (atBottom) box.scrollTop = box.scrollHeight;
  });
  source.addEventListener("deleted", () => {
    const banner = document.getElementById("banner");
    banner.textContent = `This ${section.dataset.jobKind} has been deleted.`;
    banner.hidden = false;
    source.close();
    setLive("job deleted", false);
  });
}

function connect(section) {
  const source = new EventSource(section.dataset.stream);
  source.onopen = () => setLive("live", true);
  source.onerror = () => setLive(source.readyState === EventSource.CLOSED ? "disconnected" : "reconnecting…", false);
  if (section.dataset.kind === "list") listStream(section, source);
  else jobStream(section, source);
}

function showResult(el, ok, html) {
  el.className = ok ? "ok" : "error";
  el.replaceChildren(fragment(html));
}

function escapeHtml(text) {
  const d = document.createElement("div");
  d.textContent = text;
  return d.innerHTML;
}

async function errorHtml(response) {
  let body;
  try { body = await response.json(); } catch { body = { error: `HTTP ${response.status}` }; }
  const causes = (body.causes || []).map((c) => `<li>${escapeHtml(c)}</li>`).join("");
  return `<p class="message">${escapeHtml(body.error || "request failed")}</p>` +
    (causes ? `<ul class="causes">${causes}</ul>` : "");
}

function setupCreate() {
  const form = document.getElementById("create-form");
  if (!form) return;
  const result = document.getElementById("create-result");
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const response = await fetch(form.dataset.action, {
      method: "POST",
      headers: { ...WRITE_HEADERS, "Content-Type": "application/yaml" },
      body: document.getElementById("yaml").value,
    });
    if (response.ok) {
      const body = await response.json();
      showResult(result, true, `<p>Created <a href="${escapeHtml(body.url)}">${escapeHtml(body.name)}</a>.</p>`);
    } else {
      showResult(result, false, await errorHtml(response));
    }
  });
}

function setupDelete() {
  const button = document.getElementById("delete");
  if (!button) return;
  const dialog = document.getElementById("confirm-delete");
  button.addEventListener("click", () => dialog.showModal());
  dialog.addEventListener("close", async () => {
    if (dialog.returnValue !== "delete") return;
    const confirm = document.getElementById("confirm");
    const response = await fetch(confirm.dataset.action, { method: "DELETE", headers: WRITE_HEADERS });
    const banner = document.getElementById("banner");
    if (response.ok) {
      window.location.assign((await response.json()).url);
    } else {
      banner.innerHTML = await errorHtml(response);
      banner.hidden = false;
    }
  });
}

// The Suspend/Resume button lives in the detail fragment, which the stream replaces on every
// change: one listener on the document serves whichever button is there.
function setupSuspend() {
  const section = document.querySelector('section[data-kind="job"]');
  if (!section) return;
  document.addEventListener("click", async (e) => {
    const button = e.target.closest("#toggle-suspend");
    if (!button) return;
    button.disabled = true;
    const response = await fetch(`${section.dataset.job}/${button.dataset.action}`,
      { method: "POST", headers: WRITE_HEADERS });
    if (!response.ok) {
      const banner = document.getElementById("banner");
      banner.innerHTML = await errorHtml(response);
      banner.hidden = false;
      button.disabled = false;
    }
  });
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("[data-stream]").forEach(connect);
  document.querySelectorAll("select[data-nav]").forEach((s) =>
    s.addEventListener("change", () => window.location.assign(s.value)));
  setupCreate();
  setupDelete();
  setupSuspend();
});
