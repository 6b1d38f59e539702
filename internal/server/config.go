package server

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/store"
	"github.com/weftdev/weft/internal/threads"
	"github.com/weftdev/weft/internal/tracing"
	"github.com/weftdev/weft/internal/webhook"
)

// Config is the validated server configuration. Every field comes from a
// flag or, when the flag is not given, from its environment variable.
type Config struct {
	Addr            string        // -addr, WEFT_ADDR (default 127.0.0.1:8123, the SDKs' default URL)
	DatabaseURL     string        // -database-url, DATABASE_URL; empty → managed local cluster
	DataDir         string        // -data-dir, WEFT_DATA_DIR (default ./.weft): the managed cluster lives here
	Migrate         bool          // -migrate, WEFT_MIGRATE (default true): apply migrations at start
	LogFormat       string        // -log-format, WEFT_LOG_FORMAT: text (default) or json
	LogLevel        slog.Level    // -log-level, WEFT_LOG_LEVEL: debug, info (default), warn, error
	MaxBodyBytes    int64         // -max-body-bytes, WEFT_MAX_BODY_BYTES (default 10 MiB)
	ShutdownTimeout time.Duration // -shutdown-timeout, WEFT_SHUTDOWN_TIMEOUT (default 30s): drain limit
	Workers         int           // -workers, WEFT_WORKERS (default 4 × CPUs): in-process run workers; 0 = external workers only
	Lease           time.Duration // -lease, WEFT_LEASE (default 30s): how long a claimed run lasts without a heartbeat
	MaxAttempts     int           // -max-attempts, WEFT_MAX_ATTEMPTS (default 5): claims of a run before it is dead-lettered
	WorkerID        string        // -worker-id, WEFT_WORKER_ID: this process's name in dispatch audits (default generated)
	StreamHeartbeat time.Duration // not a flag: idle SSE comment interval (default 5s; tests shorten it)
	// -event-ref-min-bytes, WEFT_EVENT_REF_MIN_BYTES (default 1024): an event that repeats at least this many
	// bytes of the values of a checkpoint written with it (values, checkpoints, debug) is stored as a reference
	// to that checkpoint and rendered when read; -1 stores every event whole. 0 here means the default.
	EventRefMinBytes int
	// ValuesRefMinBytes is not a flag: the size of JSON from which a list channel of a thread's values
	// projection (threads.values: GET /threads/{id}, search, webhooks) is stored by reference to its checkpoint
	// blob and rendered when read (0: threads.ValuesRefMinBytes, 1 KiB; -1 stores every projection whole, which
	// tests compare against).
	ValuesRefMinBytes int
	// InputRefMinBytes is not a flag: the size of a run's input (its JSON as jsonb prints it) from which the run's
	// row stores it by reference to its input checkpoint once that is committed, rendered on every read of the run
	// (0: runs.InputRefMinBytes, 128; -1 stores every input whole, which tests compare against).
	InputRefMinBytes int
	// -webhook-allow-private, WEFT_WEBHOOK_ALLOW_PRIVATE (default false): let run webhooks reach addresses
	// that are not globally reachable (internal/webhook/addr.go; a path on this server is allowed unless Webhooks
	// refuses it)
	WebhookAllowPrivate bool
	// Webhooks is not a flag: langgraph.json's webhooks section (weft dev; nil: none), the URLs run and
	// cron webhooks may name (a 422 otherwise), the headers and fields their deliveries carry.
	Webhooks         *webhook.Policy
	WebhookBackoff   time.Duration // not a flag: delay after a webhook's first failed attempt (default 1s; tests shorten it)
	TTLSweepInterval time.Duration // not a flag: how often expired threads are swept (default 1m; tests shorten it)
	// not a flag: how often expired store items are deleted (default store.DefaultSweepInterval, 1m; tests
	// shorten it). Expired items are invisible at once; the sweeper only frees their rows.
	StoreSweepInterval time.Duration
	// Not flags: langgraph.json's checkpointer.ttl and store.ttl (weft dev): the ttl of a thread created
	// without one (unset: never expires), of a store put without one (nil: none), and whether store reads
	// refresh ttls unless asked not to (StoreNoRefreshOnRead false: they do, as by default).
	ThreadDefaultTTL     threads.TTLRequest
	StoreDefaultTTL      *float64
	StoreNoRefreshOnRead bool
	// StoreClock is not a flag: the time the store uses instead of the database's now() (nil: now(); tests
	// move it to expire items without sleeping).
	StoreClock func() time.Time
	// CronInterval is not a flag: how often each replica looks for due crons (default crons.DefaultInterval,
	// 1s; tests shorten it).
	CronInterval time.Duration
	// CronClock is not a flag: the time crons are scheduled by instead of the database's now() (nil: now();
	// tests move it to make a cron due without waiting). The test-only WEFT_TEST_CRON_SPEED=N sets both:
	// a clock running N times faster than real time from the start, and an interval of 1s/N (at least 20ms);
	// the test-only WEFT_TEST_CRON_INTERVAL (a duration, 1ms to 1m) sets the interval alone.
	CronClock func() time.Time
	// CronBatch is not a flag: how many due crons one transaction fires (0: crons' default, 100; the
	// test-only WEFT_TEST_CRON_BATCH, 1 to 1000, sets it).
	CronBatch int
	// TempRetention is not a flag: how long a finished stateless run's thread is kept when nobody waited
	// for its result (on_completion / on_run_completed delete; default 1m; tests shorten it, or lengthen it to
	// see no background change).
	TempRetention time.Duration
	// -store-index, WEFT_STORE_INDEX (default none): the store's semantic index as langgraph.json's store.index
	// JSON, {"dims": 1536, "embed": "openai:text-embedding-3-small", "fields": ["$"]}; its endpoint from
	// OPENAI_BASE_URL (default https://api.openai.com/v1) and OPENAI_API_KEY. nil: no semantic search.
	StoreIndex *store.IndexConfig
	// StoreIndexer is not a flag: the store indexer's batch, lease, backoff and poll (zero: defaults; tests
	// shorten the backoff).
	StoreIndexer store.IndexerConfig
	// -cors-origins, WEFT_CORS_ORIGINS (comma list, default none): web origins allowed besides
	// http(s)://localhost, 127.0.0.1 and [::1] on any port; "*" allows every origin, without credentials
	CORSOrigins []string
	// -allowed-hosts, WEFT_ALLOWED_HOSTS (comma list, default none): Host names accepted on loopback
	// connections besides the loopback names (DNS-rebinding protection); "*" turns the check off
	AllowedHosts []string
	// -error-body, WEFT_ERROR_BODY: json ({"detail": "..."}, as LangGraph's Python server answers) or text
	// (the detail as plain text, as LangGraph.js's server answers; a client sending Accept:
	// application/json still gets JSON). Empty: json, except under weft dev serving only JS graphs.
	ErrorBody string

	// -builtin-graphs, WEFT_BUILTIN_GRAPHS (default true): serve the built-in demo graphs (foo_bar,
	// echo_chat, hitl, slow) when Graphs is nil. NoBuiltinGraphs leaves them out, so a worker may serve its
	// own graphs under those ids and no demo assistant is listed.
	NoBuiltinGraphs bool

	// Graphs are the graphs this server runs (not a flag; nil → the
	// built-in graphs, unless NoBuiltinGraphs). Tests register their own.
	Graphs *graph.Registry

	// -metrics-addr, WEFT_METRICS_ADDR (default none): also serve GET /metrics on this address (and only
	// that there), for a scraper that should not reach the API; /metrics is on -addr either way
	MetricsAddr string
	// Tracing is what the standard OTEL_* variables ask for (not a flag; see tracing.SettingsFromEnv):
	// off unless an OTLP endpoint or OTEL_TRACES_EXPORTER=otlp is set
	Tracing tracing.Settings
	// Keyring is encryption at rest (not a flag, so that keys never show in a process list): from
	// LANGGRAPH_AES_KEY (the current key, 16, 24 or 32 bytes of text, as LangGraph reads it) and
	// WEFT_AES_OLD_KEYS (comma list of older keys, read but never written, during a rotation). nil: off.
	// See docs/encryption.md.
	Keyring *crypt.Keyring
	// TracerProvider is not a flag: when set, the server traces with it instead of one built from
	// Tracing (tests record spans with an in-memory exporter); the caller shuts it down
	TracerProvider trace.TracerProvider

	// -auth, WEFT_AUTH: how requests are authenticated. "" (the default): not at all, and then the
	// server listens only on a loopback address; "none": not at all, on any address (a warning is
	// logged); "keys": API keys (weft keys create); "jwt": bearer tokens checked against JWT. See
	// docs/production.md.
	Auth string
	// JWT is WEFT_AUTH=jwt's settings: -jwt-jwks-url WEFT_JWT_JWKS_URL, -jwt-issuer WEFT_JWT_ISSUER,
	// -jwt-audience WEFT_JWT_AUDIENCE (all three required), -jwt-tenant-claim WEFT_JWT_TENANT_CLAIM
	// (default tenant), -jwt-jwks-refresh WEFT_JWT_JWKS_REFRESH (default 10m).
	JWT auth.JWTConfig
	// KeyCacheTTL is not a flag: how long an API key found valid is trusted without asking the
	// database again, so how long a revoked key keeps working at most (default 5s).
	KeyCacheTTL time.Duration
	// Authenticate is not a flag: a Go program's own authentication (it replaces WEFT_AUTH's keys or
	// jwt). It returns the caller's Principal, or an error: an *auth.Error is answered with its status
	// (auth.Unauthorized: 401), any other error is a 500.
	Authenticate func(r *http.Request) (auth.Principal, error)
	// ConfigurableHeaders is not a flag: which request headers join a run's configurable (weft dev: langgraph.json's
	// http.configurable_headers; zero: every x-* header and user-agent, as LangGraph.js's server copies them).
	ConfigurableHeaders runs.HeaderPolicy
	// Front is not a flag: what serves requests in front of the API (api) on the listener, with the server's
	// Host and CORS policy as guard (weft dev: a project's http.app and ui, internal/cli/dev/projecthttp). nil: the API.
	Front func(api http.Handler, guard func(http.Handler) http.Handler) http.Handler
	// CORS is not a flag: langgraph.json's http.cors (weft dev), the whole CORS policy instead of the loopback
	// origins and -cors-origins (httpapi.CORSPolicy; nil: those).
	CORS *httpapi.CORSPolicy
	// Disabled is not a flag: the route groups turned off (weft dev: langgraph.json's http.disable_<group>,
	// httpapi.Groups): their routes answer 404; with "webhooks", runs keep running and no webhook is sent.
	Disabled map[string]bool
	// -mount-prefix, WEFT_MOUNT_PREFIX (default none; weft dev: else langgraph.json's http.mount_prefix): every
	// route is served under this path (/api), the probes at the root too (httpapi.Mount); URL includes it.
	MountPrefix string
	// LogHeaders is not a flag: the request headers each request's log line carries (weft dev: langgraph.json's
	// http.logging_headers; nil: none).
	LogHeaders *runs.HeaderPolicy
	// AuthFirst is not a flag: requests for the API are authenticated before Front's middleware sees them
	// (weft dev: langgraph.json's http.middleware_order "auth_first"; false: "middleware_first", the
	// middleware sees every request first, the refused ones too).
	AuthFirst bool
	// AuthenticateNow is not a flag: authenticates a request at once, for AuthFirst, when Authenticate leaves
	// the work to the authorize step (weft dev: auth.path's authenticate handler); nil: Authenticate.
	AuthenticateNow func(r *http.Request) error
	// Authorize is not a flag: a Go program's per-resource authorize hook (allow, deny, or filter by
	// metadata), asked about every request after its scope was checked.
	Authorize auth.AuthorizeFunc
	// WorkerKey is not a flag: a credential accepted with the worker scope in every auth mode, that
	// weft dev gives the JS worker it runs.
	WorkerKey string
	// GraphDescriptions is not a flag: the description of each graph's system assistant, by graph id
	// (weft dev: langgraph.json's graphs.<id>.description, as LangGraph's server reads it). When
	// non-nil, every registration of a worker's graph sets its system assistant's description to
	// this one, none for a graph missing here. nil: registrations leave descriptions as they are.
	GraphDescriptions map[string]string
	// EditOpenAPI is not a flag: it changes the OpenAPI document GET /openapi.json and
	// /openapi.yaml serve (weft dev: the project's http.app routes, langgraph.json's
	// auth.openapi). nil: the generated document as it is.
	EditOpenAPI httpapi.EditOpenAPI
	// Settings are what the server starts with and where each came from (the
	// flags, then what an embedder such as weft dev adds: langgraph.json's
	// keys), logged at start and reported by GET /info; Warnings, settings
	// read and not applied, likewise.
	Settings []httpapi.Setting
	Warnings []string
}

// AuthOn tells whether requests are authenticated (WEFT_AUTH keys or jwt, or an Authenticate hook).
func (c Config) AuthOn() bool {
	return c.Authenticate != nil || c.Auth == "keys" || c.Auth == "jwt"
}

// ParseConfig reads flags from args and the environment through getenv.
func ParseConfig(args []string, getenv func(string) string, stderr io.Writer) (Config, error) {
	// LangGraph's server's names for some settings (DATABASE_URI, …) read as Weft's: aliases.go.
	aliases, rawenv := readAliases(getenv), getenv
	getenv = aliases.getenv
	env := func(key, def string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return def
	}
	fs := flag.NewFlagSet("weft", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c Config
	var eventRefMin, builtinGraphs, level, migrate, maxBody, shutdown, workers, lease, attempts, allowPrivate, corsOrigins, allowedHosts, storeIndex string
	var jwksRefresh string
	fs.StringVar(&c.Addr, "addr", env("WEFT_ADDR", "127.0.0.1:8123"), "listen address (WEFT_ADDR)")
	fs.StringVar(&c.DatabaseURL, "database-url", env("DATABASE_URL", ""), "PostgreSQL URL; empty runs a managed local cluster (DATABASE_URL)")
	fs.StringVar(&c.DataDir, "data-dir", env("WEFT_DATA_DIR", ".weft"), "directory of the managed local cluster (WEFT_DATA_DIR)")
	fs.StringVar(&migrate, "migrate", env("WEFT_MIGRATE", "true"), "apply database migrations at start (WEFT_MIGRATE)")
	fs.StringVar(&c.LogFormat, "log-format", env("WEFT_LOG_FORMAT", "text"), "log format: text or json (WEFT_LOG_FORMAT)")
	fs.StringVar(&level, "log-level", env("WEFT_LOG_LEVEL", "info"), "log level: debug, info, warn, error (WEFT_LOG_LEVEL)")
	fs.StringVar(&maxBody, "max-body-bytes", env("WEFT_MAX_BODY_BYTES", strconv.Itoa(httpapi.DefaultMaxBody)), "request body limit in bytes (WEFT_MAX_BODY_BYTES)")
	fs.StringVar(&shutdown, "shutdown-timeout", env("WEFT_SHUTDOWN_TIMEOUT", "30s"), "how long shutdown waits for in-flight requests (WEFT_SHUTDOWN_TIMEOUT)")
	fs.StringVar(&workers, "workers", env("WEFT_WORKERS", strconv.Itoa(4*runtime.NumCPU())), "in-process run workers; 0 leaves runs to external workers (WEFT_WORKERS)")
	fs.StringVar(&lease, "lease", env("WEFT_LEASE", "30s"), "lease of a claimed run without heartbeat (WEFT_LEASE)")
	fs.StringVar(&attempts, "max-attempts", env("WEFT_MAX_ATTEMPTS", "5"), "claims of a run before it is dead-lettered (WEFT_MAX_ATTEMPTS)")
	fs.StringVar(&eventRefMin, "event-ref-min-bytes", env("WEFT_EVENT_REF_MIN_BYTES", "1024"), "store an event repeating at least this many bytes of a checkpoint's values as a reference to it; -1: never (WEFT_EVENT_REF_MIN_BYTES)")
	fs.StringVar(&c.WorkerID, "worker-id", env("WEFT_WORKER_ID", ""), "name of this process's workers in dispatch audits (WEFT_WORKER_ID)")
	fs.StringVar(&allowPrivate, "webhook-allow-private", env("WEFT_WEBHOOK_ALLOW_PRIVATE", "false"), "let run webhooks reach loopback and private addresses (WEFT_WEBHOOK_ALLOW_PRIVATE)")
	fs.StringVar(&corsOrigins, "cors-origins", env("WEFT_CORS_ORIGINS", ""), "comma list of web origins allowed besides localhost ones; * = any, without credentials (WEFT_CORS_ORIGINS)")
	fs.StringVar(&builtinGraphs, "builtin-graphs", env("WEFT_BUILTIN_GRAPHS", "true"), "serve the built-in demo graphs foo_bar, echo_chat, hitl, hitl_chat and slow (WEFT_BUILTIN_GRAPHS)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", env("WEFT_METRICS_ADDR", ""), "also serve GET /metrics on this address, e.g. 127.0.0.1:9090 (WEFT_METRICS_ADDR)")
	fs.StringVar(&allowedHosts, "allowed-hosts", env("WEFT_ALLOWED_HOSTS", ""), "comma list of Host names accepted on loopback besides localhost ones; * = no check (WEFT_ALLOWED_HOSTS)")
	fs.StringVar(&c.MountPrefix, "mount-prefix", env("WEFT_MOUNT_PREFIX", ""), "serve every route under this path, e.g. /api (GET /, /ok, /livez and /metrics also at the root) (WEFT_MOUNT_PREFIX)")
	fs.StringVar(&c.ErrorBody, "error-body", env("WEFT_ERROR_BODY", ""), "error answers: json ({\"detail\": ...}) or text (the detail as plain text, as LangGraph.js's server); default json, text under weft dev for JS-only projects (WEFT_ERROR_BODY)")
	fs.StringVar(&storeIndex, "store-index", env("WEFT_STORE_INDEX", ""), `store semantic index, langgraph.json's store.index as JSON: {"dims": 1536, "embed": "openai:text-embedding-3-small", "fields": ["$"]}; endpoint from OPENAI_BASE_URL, OPENAI_API_KEY (WEFT_STORE_INDEX)`)
	fs.StringVar(&c.Auth, "auth", env("WEFT_AUTH", ""), "authentication: keys (API keys, weft keys create), jwt (bearer tokens), none; unset: none and loopback addresses only (WEFT_AUTH)")
	fs.StringVar(&c.JWT.JWKSURL, "jwt-jwks-url", env("WEFT_JWT_JWKS_URL", ""), "auth=jwt: URL of the issuer's JSON Web Key Set (WEFT_JWT_JWKS_URL)")
	fs.StringVar(&c.JWT.Issuer, "jwt-issuer", env("WEFT_JWT_ISSUER", ""), "auth=jwt: the iss every token must carry (WEFT_JWT_ISSUER)")
	fs.StringVar(&c.JWT.Audience, "jwt-audience", env("WEFT_JWT_AUDIENCE", ""), "auth=jwt: the aud every token must include (WEFT_JWT_AUDIENCE)")
	fs.StringVar(&c.JWT.TenantClaim, "jwt-tenant-claim", env("WEFT_JWT_TENANT_CLAIM", "tenant"), "auth=jwt: the claim naming the tenant (WEFT_JWT_TENANT_CLAIM)")
	fs.StringVar(&jwksRefresh, "jwt-jwks-refresh", env("WEFT_JWT_JWKS_REFRESH", "10m"), "auth=jwt: how long the key set is cached; an unknown key id fetches it at once (WEFT_JWT_JWKS_REFRESH)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		// flag stops at the first non-flag: everything after it would be
		// silently ignored.
		fs.Usage()
		return c, fmt.Errorf("unexpected argument %q: weft takes only flags (-help lists them)", fs.Arg(0))
	}
	c.Settings = flagSettings(fs, getenv)
	if err := aliases.apply(fs, rawenv, &c); err != nil {
		return c, err
	}
	c.CORSOrigins = splitList(corsOrigins)
	c.AllowedHosts = splitList(allowedHosts)
	for _, o := range c.CORSOrigins {
		if err := checkOrigin(o); err != nil {
			return c, err
		}
	}
	for _, h := range c.AllowedHosts {
		if h != "*" && strings.ContainsAny(h, "/: ") && !strings.HasPrefix(h, "[") {
			return c, fmt.Errorf("allowed hosts: %q must be a host name without scheme or port", h)
		}
	}
	if err := httpapi.CheckMountPrefix(c.MountPrefix); err != nil {
		return c, fmt.Errorf("mount prefix: %q %w", c.MountPrefix, err)
	}
	if c.ErrorBody != "" && c.ErrorBody != "json" && c.ErrorBody != "text" {
		return c, fmt.Errorf("error body: %q is neither json nor text", c.ErrorBody)
	}
	builtin, err := strconv.ParseBool(builtinGraphs)
	if err != nil {
		return c, fmt.Errorf("builtin graphs: %q is not a boolean", builtinGraphs)
	}
	c.NoBuiltinGraphs = !builtin
	if strings.TrimSpace(storeIndex) != "" {
		if c.StoreIndex, err = store.ParseIndexConfig([]byte(storeIndex)); err != nil {
			return c, err
		}
		if err := c.StoreIndex.WithOpenAIEnv(getenv); err != nil {
			return c, err
		}
	}
	if c.Migrate, err = strconv.ParseBool(migrate); err != nil {
		return c, fmt.Errorf("migrate: %q is not a boolean", migrate)
	}
	if c.WebhookAllowPrivate, err = strconv.ParseBool(allowPrivate); err != nil {
		return c, fmt.Errorf("webhook allow private: %q is not a boolean", allowPrivate)
	}
	if err := c.LogLevel.UnmarshalText([]byte(level)); err != nil {
		return c, fmt.Errorf("log level: %w", err)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return c, fmt.Errorf("log format: %q must be text or json", c.LogFormat)
	}
	if c.MaxBodyBytes, err = strconv.ParseInt(maxBody, 10, 64); err != nil || c.MaxBodyBytes < 1024 {
		return c, fmt.Errorf("max body bytes: %q must be an integer >= 1024", maxBody)
	}
	if c.ShutdownTimeout, err = time.ParseDuration(shutdown); err != nil || c.ShutdownTimeout < 0 {
		return c, fmt.Errorf("shutdown timeout: %q is not a duration", shutdown)
	}
	if c.Workers, err = strconv.Atoi(workers); err != nil || c.Workers < 0 || c.Workers > 1024 {
		return c, fmt.Errorf("workers: %q must be an integer from 0 to 1024", workers)
	}
	if c.Lease, err = time.ParseDuration(lease); err != nil || c.Lease < time.Second {
		return c, fmt.Errorf("lease: %q must be a duration of at least 1s", lease)
	}
	if c.MaxAttempts, err = strconv.Atoi(attempts); err != nil || c.MaxAttempts < 1 || c.MaxAttempts > 100 {
		return c, fmt.Errorf("max attempts: %q must be an integer from 1 to 100", attempts)
	}
	if c.EventRefMinBytes, err = strconv.Atoi(eventRefMin); err != nil || c.EventRefMinBytes < -1 || c.EventRefMinBytes == 0 {
		return c, fmt.Errorf("event ref min bytes: %q must be a positive integer, or -1 for never", eventRefMin)
	}
	if c.Addr == "" {
		return c, fmt.Errorf("addr must not be empty")
	}
	if v := getenv("WEFT_TEST_CRON_SPEED"); v != "" {
		// Test-only (the SDK suite): crons fire every real second on an every-minute schedule.
		speed, err := strconv.Atoi(v)
		if err != nil || speed < 1 || speed > 3600 {
			return c, fmt.Errorf("WEFT_TEST_CRON_SPEED: %q must be an integer from 1 to 3600", v)
		}
		c.CronClock, c.CronInterval = acceleratedClock(time.Now(), speed), max(time.Second/time.Duration(speed), 20*time.Millisecond)
	}
	if v := getenv("WEFT_TEST_CRON_INTERVAL"); v != "" {
		// Test-only (server processes racing for the same crons): how often each one looks for due crons; the
		// clock stays the database's.
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Millisecond || d > time.Minute {
			return c, fmt.Errorf("WEFT_TEST_CRON_INTERVAL: %q must be a duration from 1ms to 1m", v)
		}
		c.CronInterval = d
	}
	if v := getenv("WEFT_TEST_CRON_BATCH"); v != "" {
		// Test-only (server processes racing for the same crons: each takes a share of a round).
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return c, fmt.Errorf("WEFT_TEST_CRON_BATCH: %q must be an integer from 1 to 1000", v)
		}
		c.CronBatch = n
	}
	if c.Keyring, err = crypt.ParseKeyring(getenv("LANGGRAPH_AES_KEY"), getenv("WEFT_AES_OLD_KEYS")); err != nil {
		return c, fmt.Errorf("encryption: %w", err)
	}
	if c.Tracing, err = tracing.SettingsFromEnv(getenv); err != nil {
		return c, fmt.Errorf("tracing: %w", err)
	}
	if c.JWT.Refresh, err = time.ParseDuration(jwksRefresh); err != nil || c.JWT.Refresh < time.Second {
		return c, fmt.Errorf("jwt jwks refresh: %q must be a duration of at least 1s", jwksRefresh)
	}
	if err := c.checkAuth(); err != nil {
		return c, err
	}
	return c, nil
}

// checkAuth validates the auth settings.
func (c Config) checkAuth() error {
	switch c.Auth {
	case "", "none", "keys":
	case "jwt":
		var missing []string
		for _, s := range []struct{ v, name string }{{c.JWT.JWKSURL, "WEFT_JWT_JWKS_URL"}, {c.JWT.Issuer, "WEFT_JWT_ISSUER"},
			{c.JWT.Audience, "WEFT_JWT_AUDIENCE"}} {
			if strings.TrimSpace(s.v) == "" {
				missing = append(missing, s.name)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("auth: WEFT_AUTH=jwt needs %s", strings.Join(missing, ", "))
		}
		if u, err := url.Parse(c.JWT.JWKSURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("auth: WEFT_JWT_JWKS_URL %q must be an http(s) URL", c.JWT.JWKSURL)
		}
	default:
		return fmt.Errorf("auth: WEFT_AUTH %q must be keys, jwt or none", c.Auth)
	}
	if c.Authenticate != nil && (c.Auth == "keys" || c.Auth == "jwt") {
		return fmt.Errorf("auth: an Authenticate hook replaces WEFT_AUTH=%s; set one or the other", c.Auth)
	}
	return nil
}

// checkExposure refuses an address other than loopback without
// authentication, unless WEFT_AUTH=none says so (then it warns).
func (c Config) checkExposure(log *slog.Logger) error {
	if c.AuthOn() || loopbackAddr(c.Addr) {
		return nil
	}
	if c.Auth == "none" {
		log.Warn("serving WITHOUT authentication on a non-loopback address (WEFT_AUTH=none): anyone who reaches "+
			c.Addr+" can read and change every thread", "addr", c.Addr)
		return nil
	}
	return fmt.Errorf("refusing to listen on %s without authentication: anyone who can reach it could read and change "+
		"every thread. Set WEFT_AUTH=keys (API keys: weft keys create) or WEFT_AUTH=jwt (see docs/production.md), "+
		"listen on 127.0.0.1 (-addr, WEFT_ADDR), or set WEFT_AUTH=none to serve without authentication anyway", c.Addr)
}

// loopbackAddr tells whether addr (host:port) listens on loopback only: a
// loopback IP, or a name that resolves to loopback addresses only. An
// empty host (all interfaces) is not.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		return ip.IsLoopback()
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return false
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return false
		}
	}
	return true
}

// acceleratedClock is a clock that runs speed times faster than real time
// from start on.
func acceleratedClock(start time.Time, speed int) func() time.Time {
	return func() time.Time { return start.Add(time.Since(start) * time.Duration(speed)) }
}

// Security is the browser-facing policy the config asks for (CORS origins
// and the Host check), for httpapi.Deps.
func (c Config) Security() httpapi.Security {
	return httpapi.Security{CORSOrigins: c.CORSOrigins, AllowedHosts: c.AllowedHosts, CORS: c.CORS}
}

// splitList splits a comma list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// checkOrigin accepts "*" or scheme://host[:port] with nothing after it.
func checkOrigin(o string) error {
	if o == "*" {
		return nil
	}
	u, err := url.Parse(strings.TrimSuffix(o, "/"))
	if err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
		return fmt.Errorf("cors origins: %q must be * or scheme://host[:port]", o)
	}
	return nil
}

// NewLogger builds the slog logger the config asks for.
func (c Config) NewLogger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
