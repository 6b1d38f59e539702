// Minimal thread list until the full UI lands.
(async () => {
  const info = await fetch("/info").then((r) => r.json());
  document.getElementById("version").textContent = "v" + info.version;
  const res = await fetch("/threads/search", { method: "POST", body: JSON.stringify({ limit: 50 }) });
  const tbody = document.querySelector("#threads tbody");
  for (const t of await res.json()) {
    const tr = document.createElement("tr");
    for (const v of [t.thread_id, t.parent_thread_id || "", t.status, t.updated_at]) {
      const td = document.createElement("td");
      td.textContent = v;
      tr.appendChild(td);
    }
    tbody.appendChild(tr);
  }
})();
