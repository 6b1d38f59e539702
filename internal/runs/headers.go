package runs

import (
	"net/http"
	"strings"
)

// headersNotInConfig are the x- headers a run's config never gets: the
// credentials LangGraph's servers leave out, and Weft's own control headers.
var headersNotInConfig = map[string]bool{"x-api-key": true, "x-tenant-id": true, "x-service-key": true}

// withRequestHeaders puts the request's headers into config.configurable as
// both official servers do at run creation: every x-* header (lowercase
// name, its first value) but the credentials of headersNotInConfig and
// x-weft-*, and user-agent. They win over the body's configurable keys of
// the same name. A graph reads a caller's per-request settings so (a
// header a proxy or an http.app middleware adds, the SDK's defaultHeaders).
func withRequestHeaders(config map[string]any, h http.Header) map[string]any {
	var conf map[string]any
	for name, values := range h {
		key := strings.ToLower(name)
		if len(values) == 0 || headersNotInConfig[key] || strings.HasPrefix(key, "x-weft-") ||
			(!strings.HasPrefix(key, "x-") && key != "user-agent") {
			continue
		}
		if conf == nil {
			if config == nil {
				config = map[string]any{}
			}
			switch c := config["configurable"].(type) {
			case map[string]any:
				conf = c
			case nil:
				conf = map[string]any{}
				config["configurable"] = conf
			default:
				return config // not an object: the run's validation refuses it
			}
		}
		conf[key] = values[0]
	}
	return config
}
