package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Settings are what the OTEL_* environment asks of Weft's tracing.
type Settings struct {
	// Exporter is "otlp" when traces are exported, "" when tracing is off.
	Exporter string
}

// On reports whether tracing is on.
func (s Settings) On() bool { return s.Exporter != "" }

// SettingsFromEnv reads the standard variables through getenv. Tracing is
// on when OTEL_TRACES_EXPORTER is "otlp", or unset while an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is
// set; off when none of them is set, when OTEL_TRACES_EXPORTER is "none" or
// OTEL_SDK_DISABLED is true. OTEL_SERVICE_NAME alone does not turn it on
// (it only names the service). Other exporters, and an OTLP protocol other
// than http/protobuf, are errors: Weft exports over OTLP/HTTP only.
func SettingsFromEnv(getenv func(string) string) (Settings, error) {
	if v := strings.TrimSpace(getenv("OTEL_SDK_DISABLED")); v != "" {
		if off, err := strconv.ParseBool(v); err != nil {
			return Settings{}, fmt.Errorf("OTEL_SDK_DISABLED: %q is not a boolean", v)
		} else if off {
			return Settings{}, nil
		}
	}
	exp := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")))
	endpoint := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	switch {
	case exp == "none", exp == "" && !endpoint:
		return Settings{}, nil
	case exp != "" && exp != "otlp":
		return Settings{}, fmt.Errorf("OTEL_TRACES_EXPORTER: %q is not supported (otlp or none)", exp)
	}
	proto := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if proto != "" && proto != "http/protobuf" {
		return Settings{}, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL: %q is not supported: Weft exports OTLP over HTTP (http/protobuf; a collector's port 4318)", proto)
	}
	return Settings{Exporter: "otlp"}, nil
}

// NewProvider builds the tracer provider s asks for: the OTLP/HTTP exporter
// (configured by the OTEL_EXPORTER_OTLP_* variables: endpoint, headers,
// timeout, compression, certificates) behind a batch span processor
// (OTEL_BSP_*), the sampler of OTEL_TRACES_SAMPLER (default: parent-based,
// always on), and a resource named service (OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES override it) at version. The caller shuts it
// down (which flushes the spans still buffered).
func NewProvider(ctx context.Context, s Settings, service, version string) (*sdktrace.TracerProvider, error) {
	if !s.On() {
		return nil, errors.New("tracing: off")
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName(service), semconv.ServiceVersion(version)),
		resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithHost(), resource.WithProcessPID())
	if err != nil && res == nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// Name is the instrumentation scope of Weft's spans.
const Name = "github.com/weftdev/weft"

// Tracer is Weft's tracer of tp; nil when tp is nil (tracing off), which
// Start treats as "no span": the instrumented code pays nothing.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return nil
	}
	return tp.Tracer(Name)
}

// Start starts a span with tr as a child of ctx's span; with a nil tr it
// returns ctx unchanged and a no-op span (no allocation).
func Start(ctx context.Context, tr trace.Tracer, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if tr == nil {
		return ctx, noop.Span{}
	}
	return tr.Start(ctx, name, opts...)
}

// propagator is the W3C Trace Context format (traceparent, tracestate):
// what the run records, the worker API and webhooks carry.
var propagator = propagation.TraceContext{}

// Traceparent is the W3C traceparent of ctx's span ("" when ctx has none).
func Traceparent(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagator.Inject(ctx, c)
	return c["traceparent"]
}

// WithRemoteParent returns ctx carrying the span context of traceparent as
// a remote parent, so the next span started from it continues that trace;
// ctx unchanged when traceparent is empty or malformed.
func WithRemoteParent(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return propagator.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
}

// Extract returns ctx with the remote parent of a request's traceparent
// header (ctx unchanged without one).
func Extract(ctx context.Context, h http.Header) context.Context {
	if h.Get("traceparent") == "" {
		return ctx
	}
	return propagator.Extract(ctx, propagation.HeaderCarrier(h))
}

// Inject sets the traceparent (and tracestate) headers of ctx's span on h;
// nothing when ctx has no span.
func Inject(ctx context.Context, h http.Header) {
	if trace.SpanContextFromContext(ctx).IsValid() {
		propagator.Inject(ctx, propagation.HeaderCarrier(h))
	}
}
