# syntax=docker/dockerfile:1
#
# Atrium's container images: static binaries (CGO_ENABLED=0) on distroless,
# running as the non-root user 65532, with no shell.
#
#   docker build --build-arg VERSION=$(git describe --tags --always) -t atrium .
#       the default build: all seven binaries in /usr/local/bin (atrium,
#       atrium-gateway, atrium-collections, atrium-crm, atrium-data,
#       atrium-actions, atrium-webhooks, atrium-audit); its entrypoint is the all-in-one atrium. The Helm
#       chart runs every component and the migration Job from this image.
#   docker build --build-arg BINARY=atrium-gateway -t atrium-gateway .
#       one binary, which is also the entrypoint.
#
# make build-static builds the same binaries the same way, without Docker.

# The toolchain the Makefile pins (GOTOOLCHAIN in the Makefile, see
# DEVELOPERS.md): Go 1.26 has standard-library vulnerabilities it fixes.
FROM golang:1.27.3 AS build
ARG BINARY=all
ARG VERSION=dev
WORKDIR /src
COPY . .
# The exec-form ENTRYPOINT cannot expand a build argument, so the build links
# /usr/local/bin/entrypoint to the binary to run.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    set -eu; \
    case "$BINARY" in \
      all) pkgs="./cmd/atrium ./gateway/cmd/atrium-gateway ./services/collections/cmd/atrium-collections \
                 ./services/crm/cmd/atrium-crm ./services/data/cmd/atrium-data ./services/actions/cmd/atrium-actions \
                 ./services/webhooks/cmd/atrium-webhooks ./services/audit/cmd/atrium-audit"; \
           entry=atrium ;; \
      atrium) pkgs=./cmd/atrium; entry=atrium ;; \
      atrium-gateway) pkgs=./gateway/cmd/atrium-gateway; entry=atrium-gateway ;; \
      atrium-collections|atrium-crm|atrium-data|atrium-actions|atrium-webhooks|atrium-audit) \
           pkgs="./services/${BINARY#atrium-}/cmd/$BINARY"; entry=$BINARY ;; \
      *) echo "BINARY must be all, atrium, atrium-gateway, atrium-collections, atrium-crm, atrium-data, atrium-actions, atrium-webhooks or atrium-audit, not $BINARY" >&2; \
         exit 1 ;; \
    esac; \
    mkdir -p /out/usr/local/bin; \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$VERSION" -o /out/usr/local/bin/ $pkgs; \
    for b in /out/usr/local/bin/*; do \
      go version -m "$b" | grep -qE '^\s+build\s+CGO_ENABLED=0$' || { echo "$b is not a static build" >&2; exit 1; }; \
    done; \
    ln -s "$entry" /out/usr/local/bin/entrypoint

# distroless/static: CA certificates (the actions service calls HTTPS
# providers, the webhooks service HTTPS endpoints), tzdata and a nonroot user; nothing else.
FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
LABEL org.opencontainers.image.title="atrium" \
      org.opencontainers.image.source="https://github.com/atrium-hq/atrium" \
      org.opencontainers.image.version="$VERSION"
COPY --from=build /out/ /
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/entrypoint"]
