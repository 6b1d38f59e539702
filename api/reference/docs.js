// Weft's API reference page (GET /docs): swagger-ui renders this server's
// own OpenAPI document, GET /openapi.json, with nothing loaded from another
// origin (no validator badge, no fonts, no telemetry). Every URL is
// relative to the page, so the page works under a mount prefix too.
//
// With auth on, /openapi.json needs a credential: the key the web UI (/)
// keeps for this tab in sessionStorage ("weft.apiKey") is sent as
// x-api-key, with this page's requests and with "Try it out".
(function () {
  "use strict";
  var status = document.getElementById("weft-docs-status");
  function apiKey() {
    try {
      return sessionStorage.getItem("weft.apiKey") || "";
    } catch (e) {
      return "";
    }
  }
  function withKey(req) {
    var key = apiKey();
    var sameOrigin = new URL(req.url, location.href).origin === location.origin;
    if (key && sameOrigin && !req.headers["x-api-key"]) req.headers["x-api-key"] = key;
    return req;
  }
  window.ui = SwaggerUIBundle({
    url: new URL("openapi.json", location.href).href,
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    requestInterceptor: withKey,
    responseInterceptor: function (res) {
      if (res.url && new URL(res.url, location.href).pathname.endsWith("/openapi.json")) {
        if (res.ok) {
          status.textContent = "";
        } else {
          status.className = "error";
          status.textContent = "GET /openapi.json answered " + res.status +
            (res.status === 401 ? ": open the web UI (/) in this tab, give it an API key, and come back." : ".");
        }
      }
      return res;
    },
  });
})();
