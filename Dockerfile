# Weft server image. Build: docker build -t weft .
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/weft ./cmd/server

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/weft /usr/local/bin/weft
# In a container the server needs DATABASE_URL: there is no local PostgreSQL to manage, and, listening on
# 0.0.0.0, WEFT_AUTH (keys or jwt; none only behind something that authenticates): see docs/production.md.
ENV WEFT_ADDR=0.0.0.0:8123 WEFT_LOG_FORMAT=json
EXPOSE 8123
USER nonroot
ENTRYPOINT ["/usr/local/bin/weft"]
