package server

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/weftdev/weft/internal/httpapi"
)

// envAlias is an environment variable of LangGraph's server read as one of
// Weft's, with the same meaning, so that a deployment's environment moves
// over unchanged. Weft's own variable wins when both are set.
type envAlias struct {
	name string // LangGraph's variable: DATABASE_URI
	of   string // Weft's: DATABASE_URL
	flag string // the flag Weft's variable is the default of: database-url
	// conv turns the alias's value into Weft's form (nil: as it is); its
	// error is reported naming the alias.
	conv func(string) (string, error)
	// check validates the converted value as the flag does (nil: no
	// check), so that a bad value is refused naming the alias rather than
	// a variable that is not set.
	check func(string) error
}

// envAliases are LangGraph's server's settings Weft reads (docs/settings.md,
// "Settings from LangGraph's server"), in the order they are looked up:
// for one Weft variable, the first alias set is used.
var envAliases = []envAlias{
	{name: "DATABASE_URI", of: "DATABASE_URL", flag: "database-url"},
	// LangGraph's server reads POSTGRES_URI when DATABASE_URI is unset.
	{name: "POSTGRES_URI", of: "DATABASE_URL", flag: "database-url"},
	// Background runs one queue worker runs at once (default 10 there):
	// Weft's in-process run workers; 0 leaves runs to external workers.
	{name: "N_JOBS_PER_WORKER", of: "WEFT_WORKERS", flag: "workers", check: intRange(0, 1024)},
	// LangGraph's server counts attempts under this name: a run is tried
	// while attempt <= BG_JOB_MAX_RETRIES (attempt 1 is the first run, so
	// 3, the default there, is 3 runs), which is WEFT_MAX_ATTEMPTS. There
	// 0 fails every run before it starts; Weft refuses it.
	{name: "BG_JOB_MAX_RETRIES", of: "WEFT_MAX_ATTEMPTS", flag: "max-attempts", check: intRange(1, 100)},
	// A comma list, items in shell quoting (Starlette's
	// CommaSeparatedStrings); "*" allows any origin without credentials.
	{name: "CORS_ALLOW_ORIGINS", of: "WEFT_CORS_ORIGINS", flag: "cors-origins", conv: commaStrings, check: func(v string) error {
		for _, o := range splitList(v) {
			if checkOrigin(o) != nil {
				return fmt.Errorf("holds %q, which is neither * nor scheme://host[:port]", o)
			}
		}
		return nil
	}},
	// LangGraph's server drops one trailing slash (/api/ is /api).
	{name: "MOUNT_PREFIX", of: "WEFT_MOUNT_PREFIX", flag: "mount-prefix", conv: func(v string) (string, error) {
		return strings.TrimSuffix(v, "/"), nil
	}, check: httpapi.CheckMountPrefix},
}

// refusedEnv are LangGraph's server's settings Weft does not have: a
// deployment that sets one is refused at start rather than run without
// what it asks for.
var refusedEnv = map[string]string{
	"BG_JOB_TIMEOUT_SECS": "Weft has no time limit for runs: a run runs until it ends, is cancelled " +
		"(POST /threads/{thread_id}/runs/{run_id}/cancel) or its worker stops renewing its lease (-lease, " +
		"WEFT_LEASE), and is then retried up to -max-attempts (WEFT_MAX_ATTEMPTS) times; unset BG_JOB_TIMEOUT_SECS",
}

// aliasedEnv is getenv with LangGraph's names read as Weft's: what Weft's
// variable answers when it is set, else its first alias set (converted),
// and which aliases were used or ignored.
type aliasedEnv struct {
	getenv  func(string) string
	used    map[string]envAlias // Weft's variable → the alias that gave its value
	ignored []string            // aliases set alongside their Weft variable (it wins)
	err     error               // an alias whose value could not be converted
}

// readAliases reads the aliases of envAliases from getenv.
func readAliases(getenv func(string) string) *aliasedEnv {
	a := &aliasedEnv{used: map[string]envAlias{}}
	values := map[string]string{}
	for _, al := range envAliases {
		v := getenv(al.name)
		if v == "" {
			continue
		}
		if getenv(al.of) != "" || a.used[al.of].name != "" {
			a.ignored = append(a.ignored, fmt.Sprintf("%s is set and ignored: %s is set too, and wins", al.name, orUsed(a.used, al.of)))
			continue
		}
		if al.conv != nil {
			var err error
			if v, err = al.conv(v); err != nil {
				a.err = errors.Join(a.err, fmt.Errorf("%s (alias of %s): %w", al.name, al.of, err))
				continue
			}
		}
		a.used[al.of], values[al.of] = al, v
	}
	a.getenv = func(key string) string {
		if _, ok := a.used[key]; ok {
			return values[key]
		}
		return getenv(key)
	}
	return a
}

// orUsed names what set Weft's variable of: the variable itself, or the
// alias used for it.
func orUsed(used map[string]envAlias, of string) string {
	if al, ok := used[of]; ok {
		return al.name
	}
	return of
}

// apply finishes reading the aliases once fs is parsed: it refuses the
// settings Weft lacks, checks each alias whose value was used (its flag
// not given), names the alias as the source of its settings, and adds a
// warning for each alias ignored.
func (a *aliasedEnv) apply(fs *flag.FlagSet, getenv func(string) string, c *Config) error {
	for name, why := range refusedEnv {
		if v := getenv(name); v != "" {
			return fmt.Errorf("%s=%q: %s", name, v, why)
		}
	}
	if a.err != nil {
		return a.err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for of, al := range a.used {
		if given[al.flag] || al.check == nil {
			continue
		}
		if err := al.check(a.getenv(of)); err != nil {
			return fmt.Errorf("%s (alias of %s): %q %w", al.name, of, a.getenv(of), err)
		}
	}
	for i, s := range c.Settings {
		if al, ok := a.used[s.Source]; ok {
			c.Settings[i].Source = al.name + " (alias of " + s.Source + ")"
		}
	}
	c.Warnings = append(c.Warnings, a.ignored...)
	return nil
}

// AliasedEnv is getenv reading LangGraph's server's variables as Weft's
// (DATABASE_URI as DATABASE_URL, …; Weft's variable wins), for commands
// that read some of the server's settings themselves (weft keys).
func AliasedEnv(getenv func(string) string) func(string) string {
	return readAliases(getenv).getenv
}

// intRange checks an integer from lo to hi.
func intRange(lo, hi int) func(string) error {
	return func(v string) error {
		if n, err := strconv.Atoi(v); err != nil || n < lo || n > hi {
			return fmt.Errorf("must be an integer from %d to %d", lo, hi)
		}
		return nil
	}
}

// commaStrings reads a comma list as Starlette's CommaSeparatedStrings
// does (POSIX shell quoting, commas as the only separators, each item
// trimmed) and writes it as Weft's comma list.
func commaStrings(v string) (string, error) {
	var items []string
	var cur strings.Builder
	token := false // cur holds an item, perhaps empty but quoted
	var quote rune
	escaped := false
	for _, r := range v {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				escaped = true
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, token = r, true
		case r == '\\':
			escaped, token = true, true
		case r == ',':
			if token {
				items = append(items, strings.TrimSpace(cur.String()))
			}
			cur.Reset()
			token = false
		default:
			cur.WriteRune(r)
			token = true
		}
	}
	if quote != 0 {
		return "", errors.New("no closing quotation")
	}
	if escaped {
		return "", errors.New("no escaped character")
	}
	if token {
		items = append(items, strings.TrimSpace(cur.String()))
	}
	for _, it := range items {
		if strings.Contains(it, ",") {
			return "", fmt.Errorf("%q: an origin has no comma", it)
		}
	}
	return strings.Join(items, ","), nil
}
