/* The writing page: an editor saved as it changes (with its preview), submit with confirmation, then read-only. */
"use strict";
(function () {
  const SAVE_DELAY = 400;
  const data = Seat.data();
  if (!data) return;
  const editor = document.getElementById("editor");
  const preview = document.getElementById("preview");
  const words = document.getElementById("words");
  const state = document.getElementById("save-state");
  const clockEl = document.getElementById("clock");
  const shownAt = performance.now();
  const baseSeconds = Number(data.seconds) || 0;
  let base = data.base;
  let edits = Number(data.edits) || 0;
  let pastes = Number(data.pastes) || 0;
  let dirty = false;
  let timer = null;
  let saving = null;
  let leaving = false;

  const seconds = () => baseSeconds + (data.locked ? 0 : (performance.now() - shownAt) / 1000);
  const payload = () => ({
    place: data.place, base: base, text: editor.value,
    seconds: Math.round(seconds() * 10) / 10, edits: edits, pastes: pastes,
  });
  const count = () => {
    const n = editor.value.split(/\s+/).filter(Boolean).length;
    words.textContent = n + " word" + (n === 1 ? "" : "s") + ".";
  };
  const stale = () => {
    leaving = true;
    Seat.noticeAfterReload("Another tab or window saved newer text here: this page was reloaded with it.");
    window.location.reload();
  };
  const save = async (keepalive) => {
    if (data.locked || Seat.ended || leaving) return;
    if (saving) { dirty = true; return; }
    dirty = false;
    state.textContent = "Saving…";
    saving = Seat.post("/api/writing/save", payload(), keepalive);
    const result = await saving;
    saving = null;
    if (result.status === 200) {
      base = result.body.version;
      preview.innerHTML = result.body.preview; /* sanitised by the server (nh3) */
      state.textContent = "Saved.";
      document.body.dataset.saved = String(base);
      if (dirty) keepLocal(); else dropLocal();
    } else if (result.status === 409 && (result.body.stale || result.body.locked)) {
      stale();
      return;
    } else if (Seat.retryable(result.status)) {
      state.textContent = result.body.error || "Saving failed; it is tried again in a moment.";
      retry();
      return;
    } else if (result.status !== 403) {
      state.textContent = (result.body.error || "Saving was refused.") + " Reload the page to go on; your text is kept in this tab.";
      return;
    }
    if (dirty) schedule();
  };
  const retry = () => {
    dirty = true;
    if (timer) window.clearTimeout(timer);
    timer = window.setTimeout(() => { timer = null; save(false); }, Seat.RETRY_MS);
  };
  const schedule = () => {
    dirty = true;
    if (timer) window.clearTimeout(timer);
    /* A hidden tab's timers are throttled (a second or more): a change made there is saved at once. */
    if (document.visibilityState === "hidden") { timer = null; save(false); return; }
    timer = window.setTimeout(() => { timer = null; save(false); }, SAVE_DELAY);
  };
  const flushOnLeave = () => {
    if (dirty && !leaving && !data.locked) {
      if (timer) { window.clearTimeout(timer); timer = null; }
      dirty = false;
      Seat.post("/api/writing/save", payload(), true);
    }
  };
  window.addEventListener("pagehide", flushOnLeave);
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") flushOnLeave(); });

  /* Unsaved text kept in this tab's storage: a reload can overtake the save sent on the way out. */
  const localKey = "centaur-writing-" + data.place;
  const keepLocal = () => {
    try { sessionStorage.setItem(localKey, JSON.stringify({ base: base, text: editor.value, edits: edits, pastes: pastes })); } catch (err) { /* off */ }
  };
  const dropLocal = () => { try { sessionStorage.removeItem(localKey); } catch (err) { /* nothing kept */ } };
  editor.addEventListener("input", (event) => {
    if (event.inputType === "insertFromPaste") pastes += 1; else edits += 1;
    count();
    keepLocal();
    schedule();
  });

  const submit = async () => {
    if (data.locked || Seat.ended || leaving) return;
    if (!editor.value.trim()) { state.textContent = "The deliverable is empty: write it first."; return; }
    const dialog = document.getElementById("confirm-submit");
    dialog.showModal();
    document.getElementById("confirm-submit-yes").focus();
  };
  const submitButton = document.getElementById("submit");
  if (submitButton) {
    submitButton.addEventListener("click", submit);
    document.getElementById("confirm-submit-no").addEventListener("click", () => document.getElementById("confirm-submit").close());
    document.getElementById("confirm-submit-yes").addEventListener("click", async () => {
      document.getElementById("confirm-submit").close();
      if (timer) { window.clearTimeout(timer); timer = null; }
      if (saving) await saving;
      const result = await Seat.post("/api/writing/submit", payload());
      if (result.status === 409 && result.body.stale) { stale(); return; }
      if (result.body && typeof result.body.version === "string") base = result.body.version; /* saved, then refused */
      if (result.status !== 200) { state.textContent = result.body.error || "Submitting failed; try again."; return; }
      leaving = true;
      dropLocal();
      window.location.assign(result.body.next);
    });
  }
  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") { event.preventDefault(); submit(); }
  });
  let restored = null;
  try { restored = JSON.parse(sessionStorage.getItem(localKey) || "null"); } catch (err) { restored = null; }
  if (restored && restored.base === base && !data.locked && typeof restored.text === "string") {
    editor.value = restored.text;
    edits = Math.max(edits, Number(restored.edits) || 0);
    pastes = Math.max(pastes, Number(restored.pastes) || 0);
    schedule();
  } else {
    dropLocal();
  }
  if (!data.locked) window.setInterval(() => { clockEl.textContent = Seat.clock(seconds()); }, 1000);
  clockEl.textContent = Seat.clock(seconds());
  count();
  document.body.dataset.ready = "1";
})();
/* The live assistant: a question goes to the organiser's server, which asks; the masked answer is shown as text. */
(function () {
  const data = Seat.data();
  const ask = document.getElementById("live-ask");
  if (!data || !ask) return;
  const question = document.getElementById("live-question");
  const list = document.getElementById("live-transcript");
  const left = document.getElementById("live-left");
  const state = document.getElementById("live-state");
  const line = (cls, who, when, text) => {
    const p = document.createElement("p");
    p.className = cls;
    if (who) {
      const strong = document.createElement("strong");
      strong.textContent = who;
      const time = document.createElement("time");
      time.textContent = when || "";
      p.append(strong, " ", time, ": ");
    }
    p.append(document.createTextNode(text));
    return p;
  };
  ask.addEventListener("click", async () => {
    if (!question.value.trim()) { state.textContent = "Write a question first."; return; }
    ask.disabled = true;
    state.textContent = "Asking your assistant…";
    const result = await Seat.post("/api/writing/ask", { place: data.place, question: question.value });
    ask.disabled = false;
    if (result.status === 200) {
      const t = result.body.turn;
      const li = document.createElement("li");
      li.append(line("question", "You", t.asked_at, t.question));
      li.append(t.answer === null ? line("answer failed", "", "", t.error) : line("answer", "Your assistant", t.answered_at, t.answer));
      list.append(li);
      left.textContent = String(result.body.left);
      question.value = "";
      state.textContent = t.answer === null ? t.error : "Answered.";
      document.body.dataset.asked = String(t.turn);
    } else {
      state.textContent = result.body.error || "The question could not be asked.";
    }
  });
})();
