// Loads the UI: /ui/config.json names the content-hashed prefix every asset
// is served under (immutable caching); this file and index.html are
// revalidated on each load, so a new build is picked up by a reload.
// (index.html preloads it while this file loads; the server sends it no-store.)
// Every URL is relative to the page, which the server serves at its root:
// under a mount prefix (/api/) the UI works unchanged.
const res = await fetch(new URL("ui/config.json", document.baseURI));
const config = await res.json();
// config.assets is a path from the server's root: under the page's directory.
config.assets = new URL("." + config.assets, document.baseURI).href;
const styled = new Promise((resolve) => {
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = config.assets + "style.css";
  link.onload = link.onerror = resolve;
  document.head.append(link);
});
// Every module at once, instead of one level of imports after another.
for (const m of config.modules) {
  const link = document.createElement("link");
  link.rel = "modulepreload";
  link.href = config.assets + m;
  document.head.append(link);
}
const [app] = await Promise.all([import(config.assets + "app.js"), styled]);
app.start(config);
