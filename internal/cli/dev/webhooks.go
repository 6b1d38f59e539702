package dev

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/weftdev/weft/internal/webhook"
)

// projectWebhooks is langgraph.json's webhooks section as the server's
// webhook policy (nil when the section is absent or null), as LangGraph's
// server reads it:
//
//	"webhooks": {
//	  "env_prefix": "LG_WEBHOOK_",
//	  "url": {"require_https": true, "allowed_domains": ["hooks.example.com", "*.corp.example"],
//	          "allowed_ports": [443], "max_url_length": 2048, "disable_loopback": true, "disable_private_ips": false},
//	  "headers": {"Authorization": "Bearer ${{ env.LG_WEBHOOK_TOKEN }}"},
//	  "allowed_fields": ["run_id", "status", "values"]
//	}
//
// With a url section that sets anything, require_https defaults to true
// and max_url_length to 2048; without one (or an empty one), to false and
// 4096. disable_loopback defaults to true (paths on this server, localhost
// and loopback addresses are refused), disable_private_ips to false.
// Header values are resolved once, here: each ${{ env.VAR }} is the
// variable's value, from this process's environment or else the config's
// env (a .env file or an object), and VAR must start with env_prefix
// (default LG_WEBHOOK_; "" allows any). A bad value, a variable outside
// the prefix or unset, stops weft dev with a message naming the key.
func projectWebhooks(raw []byte, config string, lookup func(string) (string, bool)) (*webhook.Policy, error) {
	var file struct {
		Webhooks json.RawMessage `json:"webhooks"`
		Env      json.RawMessage `json:"env"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		return nil, fmt.Errorf("langgraph.json: %w", err)
	}
	if !hasValue(file.Webhooks) {
		return nil, nil
	}
	var w struct {
		EnvPrefix     json.RawMessage            `json:"env_prefix"`
		URL           map[string]json.RawMessage `json:"url"`
		Headers       map[string]json.RawMessage `json:"headers"`
		AllowedFields []string                   `json:"allowed_fields"`
	}
	if err := json.Unmarshal(file.Webhooks, &w); err != nil {
		return nil, fmt.Errorf("langgraph.json webhooks: %w (want an object of env_prefix, url, headers, allowed_fields)", err)
	}
	p := &webhook.Policy{MaxURLLength: 4096, DisableLoopback: true}
	if err := webhookURLPolicy(w.URL, p); err != nil {
		return nil, err
	}
	for _, f := range w.AllowedFields {
		if !slices.Contains(webhook.WebhookFields, f) {
			return nil, fmt.Errorf("langgraph.json webhooks.allowed_fields: %q is not a field of a webhook's body (%s)", f, strings.Join(webhook.WebhookFields, ", "))
		}
	}
	p.AllowedFields = w.AllowedFields
	if len(w.Headers) == 0 {
		return p, nil
	}
	prefix := "LG_WEBHOOK_"
	if w.EnvPrefix != nil {
		if string(w.EnvPrefix) == "null" {
			return nil, fmt.Errorf("langgraph.json webhooks.env_prefix is null: give the prefix of the variables webhooks.headers may use (default LG_WEBHOOK_), or \"\" for any")
		}
		if err := json.Unmarshal(w.EnvPrefix, &prefix); err != nil {
			return nil, fmt.Errorf("langgraph.json webhooks.env_prefix %s: want a string", w.EnvPrefix)
		}
	}
	env := projectEnv(file.Env, filepath.Dir(config))
	p.Headers = map[string]string{}
	for name, rawValue := range w.Headers {
		key := "webhooks.headers." + name
		if !validHeaderName(name) {
			return nil, fmt.Errorf("langgraph.json %s: %q is not a valid HTTP header name", key, name)
		}
		var tmpl string
		if err := json.Unmarshal(rawValue, &tmpl); err != nil {
			return nil, fmt.Errorf("langgraph.json %s: %s: header values must be strings", key, rawValue)
		}
		value, err := expandEnvTemplate(tmpl, prefix, func(name string) (string, bool) {
			if v, ok := lookup(name); ok {
				return v, true
			}
			v, ok := env[name]
			return v, ok
		})
		if err != nil {
			return nil, fmt.Errorf("langgraph.json %s: %w", key, err)
		}
		if !validHeaderValue(value) {
			return nil, fmt.Errorf("langgraph.json %s: its value (once resolved) holds a line break or control character, which no HTTP header may", key)
		}
		p.Headers[name] = value
	}
	return p, nil
}

// webhookURLPolicy reads webhooks.url into p.
func webhookURLPolicy(url map[string]json.RawMessage, p *webhook.Policy) error {
	set := false
	for _, v := range url {
		set = set || hasValue(v)
	}
	if !set {
		return nil // LangGraph's defaults without a policy: http allowed, 4096 characters
	}
	p.RequireHTTPS, p.MaxURLLength = true, 2048
	for key, dst := range map[string]*bool{"require_https": &p.RequireHTTPS, "disable_loopback": &p.DisableLoopback,
		"disable_private_ips": &p.DisablePrivateIPs} {
		if v := url[key]; hasValue(v) {
			if err := json.Unmarshal(v, dst); err != nil {
				return fmt.Errorf("langgraph.json webhooks.url.%s %s: want true or false", key, v)
			}
		}
	}
	if v := url["max_url_length"]; hasValue(v) {
		if err := json.Unmarshal(v, &p.MaxURLLength); err != nil || p.MaxURLLength < 1 {
			return fmt.Errorf("langgraph.json webhooks.url.max_url_length %s: want a number of characters > 0", v)
		}
	}
	if v := url["allowed_ports"]; hasValue(v) {
		if err := json.Unmarshal(v, &p.AllowedPorts); err != nil {
			return fmt.Errorf("langgraph.json webhooks.url.allowed_ports %s: want a list of port numbers", v)
		}
		for _, port := range p.AllowedPorts {
			if port < 1 || port > 65535 {
				return fmt.Errorf("langgraph.json webhooks.url.allowed_ports: %d is not a port (1 to 65535)", port)
			}
		}
	}
	if v := url["allowed_domains"]; hasValue(v) {
		var domains []string
		if err := json.Unmarshal(v, &domains); err != nil {
			return fmt.Errorf("langgraph.json webhooks.url.allowed_domains %s: want a list of host names", v)
		}
		for _, d := range domains {
			d = strings.ToLower(strings.TrimSpace(d))
			switch {
			case d == "":
				return fmt.Errorf("langgraph.json webhooks.url.allowed_domains: an empty host name")
			case strings.Contains(d, "*") && (!strings.HasPrefix(d, "*.") || strings.Contains(d[2:], "*") || len(d) == 2):
				return fmt.Errorf("langgraph.json webhooks.url.allowed_domains: %q: a wildcard may only begin a name, as *.example.com (its subdomains)", d)
			}
			p.AllowedDomains = append(p.AllowedDomains, d)
		}
	}
	return nil
}

// envTemplate is a ${{ expr }} of a webhook header's value.
var envTemplate = regexp.MustCompile(`\$\{\{\s*([^}]+?)\s*\}\}`)

// expandEnvTemplate replaces each ${{ env.VAR }} of s with VAR's value;
// VAR must start with prefix ("" allows any) and be set (empty is a value).
func expandEnvTemplate(s, prefix string, lookup func(string) (string, bool)) (string, error) {
	var firstErr error
	out := envTemplate.ReplaceAllStringFunc(s, func(m string) string {
		expr := envTemplate.FindStringSubmatch(m)[1]
		name, ok := strings.CutPrefix(expr, "env.")
		var err error
		switch {
		case !ok:
			err = fmt.Errorf("%s: only ${{ env.VAR }} may be used (e.g. ${{ env.%sTOKEN }})", m, prefix)
		case name == "" || strings.Contains(name, "."):
			err = fmt.Errorf("%s: name one variable, as ${{ env.%sTOKEN }}", m, prefix)
		case !strings.HasPrefix(name, prefix):
			err = fmt.Errorf("%s: the variable %s does not start with webhooks.env_prefix %q (only such variables may be sent)", m, name, prefix)
		}
		if err == nil {
			var v string
			if v, ok = lookup(name); ok {
				return v
			}
			err = fmt.Errorf("%s: the variable %s is not set", m, name)
		}
		if firstErr == nil {
			firstErr = err
		}
		return ""
	})
	return out, firstErr
}

// projectEnv is langgraph.json's env: an object of variables, or a .env
// file (KEY=value lines, # comments, optional quotes) relative to dir.
// Anything else, or a file that cannot be read, is no variables (the
// workers report those).
func projectEnv(raw json.RawMessage, dir string) map[string]string {
	out := map[string]string{}
	var obj map[string]any
	if json.Unmarshal(raw, &obj) == nil {
		for k, v := range obj {
			if s, ok := v.(string); ok {
				out[k] = s
			} else if v != nil {
				out[k] = strings.TrimSpace(string(mustJSON(v)))
			}
		}
		return out
	}
	var file string
	if json.Unmarshal(raw, &file) != nil || file == "" {
		return out
	}
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimLeft(strings.TrimPrefix(line, "export "), " ")
		key, v, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == v[len(v)-1] && (v[0] == '"' || v[0] == '\'') {
			v = v[1 : len(v)-1]
		} else if i := strings.Index(v, " #"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
		out[key] = v
	}
	return out
}

// validHeaderName: a token of RFC 9110 (letters, digits, !#$%&'*+-.^_`|~).
func validHeaderName(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)))
	}) < 0
}

// validHeaderValue: no control character but tab.
func validHeaderValue(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) < 0
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
