package server

import (
	"flag"
	"log/slog"
	"net/url"
	"regexp"

	"github.com/weftdev/weft/internal/httpapi"
)

// envOfUsage is the environment variable a flag's usage names last:
// "listen address (WEFT_ADDR)".
var envOfUsage = regexp.MustCompile(`\(([A-Z][A-Z0-9_]*)\)$`)

// flagSettings are the settings of fs (parsed) and where each came from:
// the command line (-addr), its environment variable (WEFT_ADDR) or the
// default. A database URL's password is hidden.
func flagSettings(fs *flag.FlagSet, getenv func(string) string) []httpapi.Setting {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var out []httpapi.Setting
	fs.VisitAll(func(f *flag.Flag) {
		s := httpapi.Setting{Name: f.Name, Value: f.Value.String(), Source: "default"}
		if m := envOfUsage.FindStringSubmatch(f.Usage); m != nil && getenv(m[1]) != "" {
			s.Source = m[1]
		}
		if given[f.Name] {
			s.Source = "-" + f.Name
		}
		if u, err := url.Parse(s.Value); err == nil && u.User != nil {
			s.Value = u.Redacted()
		}
		out = append(out, s)
	})
	return out
}

// logSettings writes the settings not at their default and the warnings
// of cfg, in the words GET /info reports them.
func logSettings(log *slog.Logger, cfg Config) {
	for _, s := range cfg.Settings {
		if s.Source == "default" {
			continue
		}
		attrs := []any{"name", s.Name, "value", s.Value, "source", s.Source}
		if s.Use != "" {
			attrs = append(attrs, "use", s.Use)
		}
		log.Info("setting", attrs...)
	}
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
}
